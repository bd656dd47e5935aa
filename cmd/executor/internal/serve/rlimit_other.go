//go:build !unix

package serve

// softNoFile returns 0: the descriptor limit is unknown on this platform.
func softNoFile() uint64 { return 0 }
