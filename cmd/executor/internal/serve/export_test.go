package serve

import (
	"net"
	"net/netip"
)

// Test hooks for the connection limiter.

type ConnLimiterForTest = connLimiter

func NewConnLimiterForTest(max int) *connLimiter { return newConnLimiter(max) }

// AdmitForTest admits c; it returns the admitted conn (nil when refused), a function
// marking it busy or idle, and the evicted conn (nil when none).
func (l *connLimiter) AdmitForTest(c net.Conn) (net.Conn, func(busy bool), net.Conn) {
	lc, victim := l.admit(c)
	var v net.Conn
	if victim != nil {
		v = victim
	}
	if lc == nil {
		return nil, nil, v
	}
	return lc, func(busy bool) {
		if busy {
			lc.enter()
		} else {
			lc.exit()
		}
	}, v
}

func (l *connLimiter) OpenForTest() int { return l.open() }

func MaxConnsForForTest(nofile uint64) int { return maxConnsFor(nofile) }

func ParseProcAddrForTest(s string) (netip.AddrPort, bool) { return parseProcAddr(s) }

func SandboxedPeerForTest(local, remote netip.AddrPort) (int, error) {
	return sandboxedPeer(local, remote)
}

func SocketInodeForTest(local, remote netip.AddrPort) (string, error) {
	return socketInode(local, remote)
}
