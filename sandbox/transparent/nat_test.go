package transparent

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"
)

// tcpPacket builds an IPv4 or IPv6 TCP segment from src to dst with flags and payload
// and valid checksums.
func tcpPacket(src, dst netip.AddrPort, flags byte, payload string) []byte {
	tcp := make([]byte, tcpMinHdr+len(payload))
	tcp[12] = 5 << 4
	tcp[13] = flags
	copy(tcp[tcpMinHdr:], payload)
	var b []byte
	if src.Addr().Is4() {
		b = make([]byte, ipv4MinHdr)
		b[0] = 0x45
		binary.BigEndian.PutUint16(b[2:], uint16(ipv4MinHdr+len(tcp)))
		b[8], b[9] = 64, protoTCP
	} else {
		b = make([]byte, ipv6Hdr)
		b[0] = 0x60
		binary.BigEndian.PutUint16(b[4:], uint16(len(tcp)))
		b[6], b[7] = protoTCP, 64
	}
	p := packet{b: append(b, tcp...), v6: !src.Addr().Is4(), ipHdr: len(b)}
	p.rewrite(src, dst)
	return p.b
}

// checkSums verifies the IPv4 header and TCP checksums of b (each sums to 0xffff).
func checkSums(t *testing.T, b []byte) {
	t.Helper()
	p, ok := parsePacket(b)
	if !ok {
		t.Fatalf("not a TCP packet: %x", b)
	}
	if !p.v6 && fold(sum(0, b[:p.ipHdr])) != 0xffff {
		t.Errorf("bad IPv4 header checksum: %x", b[:p.ipHdr])
	}
	t4 := b[p.ipHdr:]
	var ps uint32
	if p.v6 {
		ps = sum(sum(0, b[8:24]), b[24:40])
	} else {
		ps = sum(sum(0, b[12:16]), b[16:20])
	}
	if fold(sum(ps+uint32(len(t4))+protoTCP, t4)) != 0xffff {
		t.Errorf("bad TCP checksum")
	}
}

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

func TestNAT_RoundTrip(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, fam := range []struct {
		cmd, dst, peer, listen string
	}{
		{"192.0.2.1:40000", "198.18.0.1:80", "192.0.2.2", "192.0.2.1:5000"},
		{"[2001:db8::1]:40000", "[fdc0:de00::1]:443", "2001:db8::2", "[2001:db8::1]:6000"},
	} {
		n := newNAT(5000, 6000)
		syn := tcpPacket(ap(fam.cmd), ap(fam.dst), tcpFlagSYN, "")
		out := n.translate(syn, now)
		if out == nil {
			t.Fatalf("%s: SYN dropped", fam.dst)
		}
		checkSums(t, out)
		p, _ := parsePacket(out)
		if p.src.Addr().String() != fam.peer || p.dst != ap(fam.listen) {
			t.Fatalf("%s: SYN rewritten to %v → %v, want %s:<n> → %s", fam.dst, p.src, p.dst, fam.peer, fam.listen)
		}
		vport := p.src.Port()
		// A retransmitted SYN and later segments keep the session's port.
		again, _ := parsePacket(n.translate(tcpPacket(ap(fam.cmd), ap(fam.dst), tcpFlagACK, "GET /"), now))
		if again.src.Port() != vport {
			t.Errorf("%s: data segment got port %d, want %d", fam.dst, again.src.Port(), vport)
		}
		// The listener's reply goes back to the command from the original destination.
		reply := tcpPacket(ap(fam.listen), netip.AddrPortFrom(p.src.Addr(), vport), tcpFlagSYN|tcpFlagACK, "")
		out = n.translate(reply, now)
		if out == nil {
			t.Fatalf("%s: reply dropped", fam.dst)
		}
		checkSums(t, out)
		r, _ := parsePacket(out)
		if r.src != ap(fam.dst) || r.dst != ap(fam.cmd) {
			t.Errorf("%s: reply rewritten to %v → %v, want %s → %s", fam.dst, r.src, r.dst, fam.dst, fam.cmd)
		}
		if dst, ok := n.lookup(vport); !ok || dst != ap(fam.dst) {
			t.Errorf("%s: lookup(%d) = %v %v", fam.dst, vport, dst, ok)
		}
	}
}

func TestNAT_Drops(t *testing.T) {
	now := time.Unix(1000, 0)
	n := newNAT(5000, 6000)
	udp := tcpPacket(ap("192.0.2.1:5353"), ap("198.18.0.1:53"), 0, "")
	udp[9] = 17
	frag := tcpPacket(ap("192.0.2.1:1"), ap("198.18.0.1:80"), tcpFlagSYN, "")
	frag[6] = 0x20 // more fragments
	for name, b := range map[string][]byte{
		"empty":                 nil,
		"not IP":                {0x10, 0, 0},
		"udp":                   udp,
		"fragment":              frag,
		"ack without a session": tcpPacket(ap("192.0.2.1:40000"), ap("198.18.0.1:80"), tcpFlagACK, ""),
		"syn-ack from the app":  tcpPacket(ap("192.0.2.1:40000"), ap("198.18.0.1:80"), tcpFlagSYN|tcpFlagACK, ""),
		"foreign source":        tcpPacket(ap("10.0.0.1:40000"), ap("198.18.0.1:80"), tcpFlagSYN, ""),
		"to the virtual peer":   tcpPacket(ap("192.0.2.1:40000"), ap("192.0.2.2:80"), tcpFlagSYN, ""),
		"listener, no session":  tcpPacket(ap("192.0.2.1:5000"), ap("192.0.2.2:10000"), tcpFlagACK, ""),
		"truncated":             tcpPacket(ap("192.0.2.1:40000"), ap("198.18.0.1:80"), tcpFlagSYN, "")[:30],
		"ipv6 extension header": func() []byte {
			b := tcpPacket(ap("[2001:db8::1]:1"), ap("[fdc0:de00::1]:80"), tcpFlagSYN, "")
			b[6] = 0
			return b
		}(),
	} {
		if out := n.translate(b, now); out != nil {
			t.Errorf("%s: translated, want dropped", name)
		}
	}
	n4 := newNAT(5000, 0)
	if out := n4.translate(tcpPacket(ap("[2001:db8::1]:1"), ap("[fdc0:de00::1]:80"), tcpFlagSYN, ""), now); out != nil {
		t.Error("IPv6 SYN translated without an IPv6 listener")
	}
	if len(n.byPort) != 0 || len(n.byFlow) != 0 {
		t.Errorf("dropped packets created sessions: %d", len(n.byPort))
	}
}

func TestNAT_Expiry(t *testing.T) {
	t0 := time.Unix(1000, 0)
	n := newNAT(5000, 6000)
	syn := func(port uint16) []byte {
		return tcpPacket(netip.AddrPortFrom(Local4, port), ap("198.18.0.1:80"), tcpFlagSYN, "")
	}
	for i := range maxSessions {
		if n.translate(syn(uint16(20000+i)), t0) == nil {
			t.Fatalf("SYN %d dropped before the table is full", i)
		}
	}
	if n.translate(syn(1), t0) != nil {
		t.Fatal("SYN translated with a full table")
	}
	// Accepted sessions stay while live; unanswered ones expire after sessionLinger.
	p, _ := parsePacket(n.translate(syn(20000), t0))
	live := p.src.Port()
	if _, ok := n.lookup(live); !ok {
		t.Fatal("lookup of a live session failed")
	}
	later := t0.Add(sessionLinger + time.Second)
	if n.translate(syn(1), later) == nil {
		t.Fatal("SYN dropped after stale sessions expired")
	}
	if _, ok := n.lookup(live); !ok {
		t.Error("live session expired")
	}
	n.release(live, later)
	n.mu.Lock()
	n.expireLocked(later.Add(sessionLinger + time.Second))
	left := len(n.byPort)
	n.mu.Unlock()
	if _, ok := n.lookup(live); ok || left != 0 {
		t.Errorf("released session still there (%d sessions left)", left)
	}
}

func TestNAT_TranslateAllocs(t *testing.T) {
	n := newNAT(5000, 6000)
	now := time.Unix(1000, 0)
	syn := tcpPacket(ap("192.0.2.1:40000"), ap("198.18.0.1:80"), tcpFlagSYN, "")
	n.translate(append([]byte(nil), syn...), now)
	data := tcpPacket(ap("192.0.2.1:40000"), ap("198.18.0.1:80"), tcpFlagACK, "payload")
	buf := make([]byte, len(data))
	if a := testing.AllocsPerRun(100, func() { copy(buf, data); n.translate(buf, now) }); a != 0 {
		t.Errorf("translate of an established segment allocates %v times, want 0", a)
	}
}
