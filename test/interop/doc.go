// Package interop runs this repository's relay, Noise and registry code against the
// released reference binaries (`codex exec-server` 0.171.0 and 0.169.0), as tests only
// (package interop_test; main_test.go describes the fixture). It is the acceptance bar for
// wire behaviour (../shared/STYLE.md principle 17): frames, handshakes, resets and registry requests
// are compared with what the releases do.
//
// Layers: the top; it imports relay/frame, noise, noise/channel, registry/server,
// registry/rendezvous, the harness SDK and executor/protocol to play the reference's peers,
// and internal/refbin to find the reference. Nothing imports it. Limits: a missing release
// fails under CI=true and skips elsewhere; waits on the reference subprocess are bounded by
// deadlines.
package interop
