package noise

import "testing"

// SetNonceForTest moves a CipherState's counter (exhaustion tests).
func SetNonceForTest(cs *CipherState, n uint64) { cs.setNonceForTest(n) }

// KeyForTest returns a copy of the CipherState key (zeroing tests).
func KeyForTest(cs *CipherState) [KeyLen]byte { return cs.key }

// PeerCacheLenForTest reports how many remote static keys id has cached.
func PeerCacheLenForTest(id *Identity) int { return id.peers.len() }

// PeerCacheEntries is the cache's bound.
const PeerCacheEntries = peerCacheEntries

// ReportCPU adds the cpu-ns/op metric (floor_bench_test.go) to a benchmark.
func ReportCPU(b *testing.B) func() { return reportCPU(b) }

// PeerTablesForTest reports how many of id's cached keys have their DH table built.
func PeerTablesForTest(id *Identity) int {
	id.peers.mu.Lock()
	defer id.peers.mu.Unlock()
	n := 0
	for _, e := range id.peers.entries {
		if e.table.Load() != nil {
			n++
		}
	}
	return n
}
