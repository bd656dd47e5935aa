// Package api is the wire contract of the environment registry (spec/registry-auth.md §1–§9):
// the JSON bodies of register, validate and connect, their paths, headers, the
// {"error":{"code","message"}} error shape with its codes, and the retry classification the
// reference's clients apply. It is shared by the executor-side client (registry/client), the
// self-hosted server (registry/server) and the harness SDK, as derp's frame constants are.
//
// # Endpoints (all POST, JSON bodies, paths relative to the registry base URL)
//
//	R1 /cloud/environment/{id}/register   executor   RegisterRequest  -> RegisterResponse
//	R2 /cloud/environment/{id}/validate   executor   ValidateRequest  -> ValidateResponse
//	                                      (header x-codex-noise-stream-id: <stream_id>)
//	R3 /cloud/environment/{id}/connect    harness    ConnectRequest   -> ConnectResponse
//
// Every call carries `authorization: Bearer <token>`. A failed call answers a non-2xx status
// with ErrorResponse; clients read error.code only to decide retryability and never echo
// the body (spec §7).
//
// # What it does not know
//
// Public keys are opaque JSON (json.RawMessage): this package imports no Noise code
// (../shared/STYLE.md dependency rules). It does no I/O and starts no goroutines; all functions are
// pure and safe for concurrent use.
//
// Limits and wire constants: limits.go.
package api
