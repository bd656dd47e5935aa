// Package wsauth authenticates WebSocket upgrades on the executor's local listener
// (`executor serve --ws-auth …`), wire-compatible with `codex exec-server --ws-auth`
// (spec/registry-auth.md §12, §13; settled against the released 0.169.0 and 0.171.0).
//
// # Layers
//
// Above: cmd/executor parses the flags into Flags; Flags.Settings checks their
// combination with the reference's texts; Load reads the token or secret file once at
// start-up and returns a Policy; the serve listener calls Policy.Authorize for every
// upgrade request after the upgrade headers themselves were found valid. The client side
// only sends `authorization: Bearer <token>` (harness.Options.AuthBearerToken), which is
// what the released codex CLI sends for an environments.toml `auth_bearer_token`.
// Below: the standard library (crypto/sha256, crypto/hmac, crypto/subtle) and
// internal/oserr for the reference's file-error texts. The package knows nothing of
// WebSockets, JSON-RPC or the listener: it is pure apart from Load's file reads.
//
// # Contract
//
// Modes:
//   - capability-token: the upgrade carries `authorization: Bearer <token>`; the SHA-256
//     of the presented token is compared in constant time with the SHA-256 of the token
//     file's trimmed contents (--ws-token-file) or with --ws-token-sha256.
//   - signed-bearer-token: the bearer is a compact JWT signed with HS256 by the trimmed
//     contents of --ws-shared-secret-file (at least 32 bytes). exp is required; nbf, iss
//     and aud are checked as the reference does, each with --ws-max-clock-skew-seconds
//     (default 30) of tolerance; the first failing check names the 401 body.
//
// Refusals are *Error values: HTTP 401 with a fixed text/plain body (one of the Msg…
// constants), never echoing the request. Tokens, secrets and Authorization values are
// never logged or put into errors; Policy's String hides them.
//
// # Limits (limits.go)
//
// Wire: DefaultMaxClockSkew (30 s), MinSharedSecretBytes (32), --ws-token-sha256 of 64
// hex digits. Implementation: token and secret files are read up to MaxSecretFileBytes
// (64 KiB; the reference reads any size), and a bearer longer than MaxBearerBytes
// (16 KiB) is refused as invalid without being hashed or decoded.
//
// # Concurrency
//
// Policy is immutable after Load and safe for concurrent use; Authorize takes the
// current time from the caller's clock and keeps no state. No goroutines.
package wsauth
