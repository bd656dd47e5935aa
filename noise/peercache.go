package noise

import "sync"

// peerCache is an Identity's memory of the remote static keys it completed handshakes
// with: each key parsed (the ML-KEM-768 encapsulation key expands its matrix Â, about
// 5 % of a responder handshake) and the static-static secret ss = DH(s, rs) (one X25519
// operation of five, about 9 %). Both depend only on the two static keys, and the same
// harness key dials the same executor again and again (one handshake per stream), so a
// repeated peer costs one map lookup instead (issue 16, docs/bench.md).
//
// What enters it: for the responder, a key only once message 1's payload decrypted with
// the keys ss went into, i.e. the initiator proved it holds the private key, so forged
// message 1s cannot fill it; for the initiator, the pinned RemoteStatic, which its
// caller configured. A cached secret is the same secret the handshake would compute: the
// transcript, every key and every wire byte are unchanged (the golden vectors pin it).
//
// Bound: peerCacheEntries keys, the oldest evicted first, its ss zeroed. A hit is
// faster than a miss, which tells the one who dials whether the key it sent completed a
// handshake recently; only the holder of that key can complete one, and the time to an
// answer includes the registry validation anyway.
//
// Safe for concurrent use: mu guards the map and the order, and is held for map
// operations only, never during a key operation. Entries' parsed keys are immutable and
// shared; ss is copied out under mu (eviction zeroes it).
type peerCache struct {
	mu      sync.Mutex
	entries map[PublicKey]*peerStatic // guarded by mu
	order   []PublicKey               // guarded by mu; insertion order, oldest first
}

// peerStatic is one cached remote static key.
type peerStatic struct {
	kem *kemEncapsulationKey
	ss  [DHLen]byte // DH(our static, this key); zeroed when evicted
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
