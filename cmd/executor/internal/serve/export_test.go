package serve

import "net/netip"

func MaxConnsForForTest(nofile uint64) int { return maxConnsFor(nofile) }

func ParseProcAddrForTest(s string) (netip.AddrPort, bool) { return parseProcAddr(s) }

func SandboxedPeerForTest(local, remote netip.AddrPort) (int, error) {
	return sandboxedPeer(local, remote)
}

func SocketInodeForTest(local, remote netip.AddrPort) (string, error) {
	return socketInode(local, remote)
}
