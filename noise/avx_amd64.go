package noise

import "golang.org/x/sys/cpu"

// circl's ML-KEM arithmetic (NTT, SHAKE×4) runs AVX2 code that returns with the upper
// halves of the YMM registers dirty: it never executes VZEROUPPER. Until something
// clears them, every legacy-SSE instruction on that thread pays a transition penalty,
// and the handshake's next steps are exactly such code: SHA-NI in SHA-256 and HKDF,
// AES-NI in the GCM setup. Measured on this project's AMD EPYC (issue 16): the
// responder handshake took ≈ 730 µs of CPU with the registers left dirty, ≈ 430 µs with
// avxCleanup after each ML-KEM call; SHA-256 was half of the dirty profile. Go's own
// assembly clears them before returning; circl's does not.

// hasAVX: VZEROUPPER is an AVX instruction; without AVX circl runs no AVX2 code and
// nothing needs clearing.
var hasAVX = cpu.X86.HasAVX

// avxCleanup clears the upper YMM halves after a circl ML-KEM call (see above).
func avxCleanup() {
	if hasAVX {
		vzeroupper()
	}
}

// vzeroupper executes VZEROUPPER (avx_amd64.s).
//
//go:noescape
func vzeroupper()
