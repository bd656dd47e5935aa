//go:build !amd64

package noise

// avxCleanup has nothing to clear off amd64 (avx_amd64.go).
func avxCleanup() {}
