package wsauth

import "time"

// Wire constants: fixed by the reference (codex-rs app-server-transport auth.rs, shared by
// `codex exec-server`; observed from 0.169.0 and 0.171.0).
const (
	// DefaultMaxClockSkew is the tolerance on exp and nbf when
	// --ws-max-clock-skew-seconds is not given, in seconds.
	DefaultMaxClockSkew = 30 * time.Second
	// MinSharedSecretBytes is the shortest accepted signed-bearer-token secret, in bytes
	// after trimming (`signed websocket bearer secret … must be at least 32 bytes`).
	MinSharedSecretBytes = 32
	// tokenSHA256HexLen is the length of --ws-token-sha256, in hex digits (SHA-256 = 32
	// bytes).
	tokenSHA256HexLen = 2 * 32
)

// Implementation limits: our choice.
const (
	// MaxSecretFileBytes bounds the token or shared-secret file read at start-up, in
	// bytes. A token is tens of bytes; the bound keeps a mistaken path (/dev/zero, a log
	// file) from exhausting memory. The reference reads any size.
	MaxSecretFileBytes = 64 << 10
	// MaxBearerBytes bounds the bearer token taken from the Authorization header, in
	// bytes; longer ones are refused as an invalid token or JWT without being hashed or
	// decoded. The listener's header limit (serve.MaxHeaderBytes) is larger; a real JWT
	// with a few claims is well under 1 KiB.
	MaxBearerBytes = 16 << 10
)
