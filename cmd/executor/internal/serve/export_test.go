package serve

import (
	"net/http"
	"net/netip"
)

func MaxConnsForForTest(nofile uint64) int { return maxConnsFor(nofile) }

func ParseProcAddrForTest(s string) (netip.AddrPort, bool) { return parseProcAddr(s) }

func SandboxedPeerForTest(local, remote netip.AddrPort) (int, error) {
	return sandboxedPeer(local, remote)
}

func SocketInodeForTest(local, remote netip.AddrPort) (string, error) {
	return socketInode(local, remote)
}

// BufferedHijackForTest wraps w as the upgrade handler does.
func BufferedHijackForTest(w http.ResponseWriter) http.Hijacker { return bufferedHijack{w} }
