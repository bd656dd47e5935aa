package transparent

// The fake-address table of the in-namespace resolver: each name it is asked for gets
// the next index n and, with it, FakeBase4+n and FakeBase6+n; a captured connection to
// one of those addresses reaches the SOCKS5 policy as the name (spec/network-proxy.md
// §8.3: the audit names the host, not an address).

import (
	"net/netip"
	"strings"
	"sync"
)

// fakeTable maps names to indexes and back. Safe for concurrent use.
type fakeTable struct {
	mu     sync.Mutex // guards byName and names
	byName map[string]uint32
	names  []string // names[n-1] is index n's name
}

func newFakeTable() *fakeTable { return &fakeTable{byName: map[string]uint32{}} }

// lookup returns name's addresses, assigning the next index on first use; ok is
// false when the table is full.
func (t *fakeTable) lookup(name string) (v4, v6 netip.Addr, ok bool) {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	t.mu.Lock()
	defer t.mu.Unlock()
	n, found := t.byName[name]
	if !found {
		if len(t.names) >= maxNames {
			return netip.Addr{}, netip.Addr{}, false
		}
		t.names = append(t.names, name)
		n = uint32(len(t.names))
		t.byName[name] = n
	}
	return fakeAddr(FakeBase4, n), fakeAddr(FakeBase6, n), true
}

// name returns the name behind a fake address; ok is false for any other address.
func (t *fakeTable) name(a netip.Addr) (string, bool) {
	a = a.Unmap()
	base := FakeBase4
	if a.Is6() {
		base = FakeBase6
	}
	n, ok := fakeIndex(base, a)
	if !ok {
		return "", false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if n == 0 || int(n) > len(t.names) {
		return "", false
	}
	return t.names[n-1], true
}

// isFake reports whether a lies in either pool (whether or not it was handed out).
func isFake(a netip.Addr) bool {
	a = a.Unmap()
	base := FakeBase4
	if a.Is6() {
		base = FakeBase6
	}
	_, ok := fakeIndex(base, a)
	return ok
}

// fakeAddr is base + n (n < 2^16 + 2^15, so only the last three bytes change).
func fakeAddr(base netip.Addr, n uint32) netip.Addr {
	b := base.AsSlice()
	l := len(b)
	v := uint32(b[l-3])<<16 | uint32(b[l-2])<<8 | uint32(b[l-1])
	v += n
	b[l-3], b[l-2], b[l-1] = byte(v>>16), byte(v>>8), byte(v)
	a, _ := netip.AddrFromSlice(b)
	return a
}

// fakeIndex is a - base when a lies in base's pool (same family, same leading bytes).
func fakeIndex(base, a netip.Addr) (uint32, bool) {
	if a.Is4() != base.Is4() {
		return 0, false
	}
	ab, bb := a.AsSlice(), base.AsSlice()
	l := len(ab)
	for i := 0; i < l-3; i++ {
		if ab[i] != bb[i] {
			return 0, false
		}
	}
	av := uint32(ab[l-3])<<16 | uint32(ab[l-2])<<8 | uint32(ab[l-1])
	bv := uint32(bb[l-3])<<16 | uint32(bb[l-2])<<8 | uint32(bb[l-1])
	if av < bv || av-bv > maxNames {
		return 0, false
	}
	return av - bv, true
}
