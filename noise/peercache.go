package noise

import (
	"sync"
	"sync/atomic"
)

// peerCache is an Identity's memory of the remote static keys it completed handshakes
// with: each key parsed (the ML-KEM-768 encapsulation key expands its matrix Â, about
// 5 % of a responder handshake), the static-static secret ss = DH(s, rs) (one X25519
// operation of five, about 9 %), and, once the peer comes back, the key prepared for the
// DH of an ephemeral with it (dhTable: the initiator's es, the responder's se, each about
// a third of the ladder's cost). Both depend only on the two static keys, and the same
// harness key dials the same executor again and again (one handshake per stream), so a
// repeated peer costs one map lookup instead (issue 16, docs/bench.md).
//
// What enters it: for the responder, a key only once message 1's payload decrypted with
// the keys ss went into, i.e. the initiator proved it holds the private key, so forged
// message 1s cannot fill it; for the initiator, the pinned RemoteStatic, which its
// caller configured. A cached secret is the same secret the handshake would compute: the
// transcript, every key and every wire byte are unchanged (the golden vectors pin it).
//
// Bound: peerCacheEntries keys (each at most ≈ 47 KiB with its table), the oldest evicted
// first, its ss zeroed. A hit is
// faster than a miss, which tells the one who dials whether the key it sent completed a
// handshake recently; only the holder of that key can complete one, and the time to an
// answer includes the registry validation anyway.
//
// Safe for concurrent use: mu guards the map and the order, and is held for map
// operations only, never during a key operation. Entries' parsed keys and tables are
// immutable and shared (a table is published atomically); ss is copied out under mu
// (eviction zeroes it).
type peerCache struct {
	mu      sync.Mutex
	entries map[PublicKey]*peerStatic // guarded by mu
	order   []PublicKey               // guarded by mu; insertion order, oldest first
}

// peerStatic is one cached remote static key.
type peerStatic struct {
	kem *kemEncapsulationKey
	ss  [DHLen]byte // DH(our static, this key); zeroed when evicted

	// table is the key prepared for DH(ephemeral, this key) (dhTable), made the first time
	// the key is found here, i.e. once a peer comes back: a peer seen once never pays its
	// ≈ 130 µs and 40 KiB. Set once (racing builders make equal tables; the first stays).
	table atomic.Pointer[dhTable]
	// noTable: the key has no table (not on the curve); the ladder is used.
	noTable atomic.Bool
}

// dhTable returns the entry's table, making it on first use; nil when the key has none.
func (e *peerStatic) dhTable(pub *dhKey) *dhTable {
	if t := e.table.Load(); t != nil || e.noTable.Load() {
		return t
	}
	t := newDHTable(pub)
	if t == nil {
		e.noTable.Store(true)
		return nil
	}
	if !e.table.CompareAndSwap(nil, t) {
		return e.table.Load()
	}
	return t
}

// lookup returns the cached parsed forms of pk and copies its ss into ss.
func (c *peerCache) lookup(pk *PublicKey, ss *[DHLen]byte) (*peerStatic, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[*pk]
	if ok {
		*ss = e.ss
	}
	return e, ok
}

// add caches pk's parsed forms and ss, evicting the oldest entry when full.
func (c *peerCache) add(pk *PublicKey, kem *kemEncapsulationKey, ss *[DHLen]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[*pk]; ok {
		return
	}
	if c.entries == nil {
		c.entries = make(map[PublicKey]*peerStatic, peerCacheEntries)
	}
	if len(c.order) >= peerCacheEntries {
		old := c.order[0]
		if e := c.entries[old]; e != nil {
			clear(e.ss[:])
		}
		delete(c.entries, old)
		c.order = append(c.order[:0], c.order[1:]...)
	}
	c.entries[*pk] = &peerStatic{kem: kem, ss: *ss}
	c.order = append(c.order, *pk)
}

// len reports the number of cached keys.
func (c *peerCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// useRemoteStatic sets the remote static key and its parsed forms, from the identity's
// cache when it holds the key (then ss comes from it too).
func (hs *HandshakeState) useRemoteStatic(pk *PublicKey) error {
	if e, ok := hs.s.peers.lookup(pk, &hs.ssVal); ok {
		hs.rs, hs.hasRS, hs.rsKEM = *pk, true, e.kem
		hs.ssCached = true
		hs.rsTable = e.dhTable((*dhKey)(&pk.X25519))
		return nil
	}
	return hs.setRemoteStatic(pk)
}

// mixSS performs the ss token, MixKey(DH(s, rs)): from the cache when useRemoteStatic
// found the key, else computed, and kept in hs.ssVal for rememberPeer.
func (hs *HandshakeState) mixSS() error {
	if !hs.ssCached {
		if err := dh((*dhKey)(&hs.ssVal), &hs.s.x, (*dhKey)(&hs.rs.X25519)); err != nil {
			return err
		}
	}
	hs.ss.mixKey(hs.ssVal[:])
	return nil
}

// rememberPeer adds the remote static key and the ss computed by mixSS to the
// identity's cache (see peerCache for when a role calls it), then zeroes hs.ssVal.
func (hs *HandshakeState) rememberPeer() {
	if !hs.ssCached {
		hs.s.peers.add(&hs.rs, hs.rsKEM, &hs.ssVal)
	}
	clear(hs.ssVal[:])
}
