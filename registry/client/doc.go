// Package client is the executor's side of the environment registry
// (spec/registry-auth.md §1–§4, §7, §8, §11): register (R1) with retries, validate (R2), and
// the credential providers that authorize both.
//
// Layers: above registry/api (wire types, paths, env-id rules) and net/http; below
// cmd/executor/internal/remote, which calls Register at start and after a 4xx websocket
// upgrade, and Validate once per harness handshake. It knows nothing of Noise (public keys are
// opaque JSON), relay frames or websockets.
//
// # HTTP rules (spec §2.2)
//
// HTTP/1.1 with connection reuse; redirects are never followed (a 3xx is an error, so
// credentials cannot leak to another host); every call is bounded by RequestTimeout (10 s,
// headers and body); headers are `content-type: application/json`, `accept: */*`, the
// provider's authorization headers, no user-agent, and a W3C `traceparent` when
// Options.Traceparent yields one. Response bodies are read up to api.MaxResponseBody.
//
// # Errors (spec §7, §4.2)
//
// Register failures are *Error values whose texts are the reference's; response bodies are
// never included — only error.code is read, to decide retryability (503
// registration_conflict and 502 authentication_service_unavailable are retried forever with
// a 500 ms → 5 s backoff; everything else is fatal). Validate failures are *ValidateError
// values; Reason maps them to the reference's noise_reason vocabulary. A validate 401 wraps
// ErrValidateUnauthorized (the caller then sends the rejection message 2).
//
// # Credentials
//
// An Auth sets the authorization headers on each request. Providers: Bearer (stdin bearer,
// API key), ChatGPT tokens (stdin or $CODEX_HOME/auth.json with OAuth refresh), Agent
// Identity (AgentAssertion per request) and CredentialStream (--executor-credential-stdin:
// rotating JSON frames on stdin, format in credframe.go, at most MaxCredentialFrameLine bytes
// per line). An Apply failure fails the register with the reference's "request auth build
// error" text (*Error wrapping the provider's error). Every provider's String/LogValue is redacted; no
// token, key, assertion or account id is ever logged or put in an error.
//
// # Concurrency
//
// A Client is safe for concurrent use (Validate runs once per pending handshake, up to 32 at
// once). It starts no goroutines beyond net/http's connection handling. CredentialStream's
// ReadFrames blocks on stdin and runs on a goroutine owned by the caller (the CLI), which
// stops it by making the read fail.
package client
