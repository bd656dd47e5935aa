// Package e2e runs the executor binary end to end on loopback, as tests only (package
// e2e_test): `executor serve`, `remote`, `registry` and `exec` built from ./cmd/executor and
// driven as a user or a harness would (processes, signals, terminals through tmux, ssh-style
// exec, the codex CLI against our executor), with -race. Where a released reference is
// needed it is found through internal/refbin and each case runs per release.
//
// Layers: the top; it sees the binary and its wire, with the harness SDK and
// executor/protocol as a client. Nothing imports it. Limits: waits are bounded by deadlines
// (subprocesses run on the real clock); slow cases are gated as their files say.
package e2e
