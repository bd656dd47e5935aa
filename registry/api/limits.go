package api

import "time"

// Wire constants, fixed by the reference (codex exec-server 0.169.0).
const (
	// SecurityProfile is the only profile register and connect speak
	// (spec/registry-auth.md §3.2, spec/relay-noise.md §5.1).
	SecurityProfile = "noise_hybrid_ik_v1"

	// EnvironmentPathPrefix starts every registry path; the environment id follows as one
	// path segment (spec/registry-auth.md §1).
	EnvironmentPathPrefix = "/cloud/environment/"

	// Path suffixes of R1–R3 after "{EnvironmentPathPrefix}{id}/".
	RegisterSuffix = "register"
	ValidateSuffix = "validate"
	ConnectSuffix  = "connect"

	// HeaderStreamID carries the relay stream id on validate (spec/registry-auth.md §4.1).
	HeaderStreamID = "x-codex-noise-stream-id"

	// MaxEnvironmentIDLen is the longest environment id, in bytes (spec/registry-auth.md §6).
	MaxEnvironmentIDLen = 256

	// MaxRegistrationIDLen is the longest executor_registration_id a client accepts, in
	// bytes (spec/registry-auth.md §3.2).
	MaxRegistrationIDLen = 256

	// MaxAuthorizationLen is the longest harness_key_authorization, in bytes of UTF-8: the
	// executor refuses longer message-1 payloads without calling validate
	// (spec/relay-noise.md §6).
	MaxAuthorizationLen = 4096

	// RequestTimeout bounds each register, validate and connect call, headers and body
	// (spec/registry-auth.md §8.3).
	RequestTimeout = 10 * time.Second
)

// Implementation constants (our choice).
const (
	// ExecutorExitedSuffix is the path suffix of this registry's exit notice
	// (ExitNoticeRequest, docs/reliability.md §5); released registries answer it 404.
	ExecutorExitedSuffix = "executor-exited"

	// MaxExitNoticeTokenLen is the longest exit_notice_token an executor accepts, in bytes
	// (ours are 47: a prefix and 32 random bytes in base64url).
	MaxExitNoticeTokenLen = 128

	// MaxRequestBody is the largest request body the self-hosted registry reads, in bytes.
	// The largest legitimate body is validate: a public key (about 1.7 KB of JSON) plus a
	// 4096-byte authorization; 64 KiB leaves room without letting a client make the server
	// buffer megabytes.
	MaxRequestBody = 64 << 10

	// MaxResponseBody is the largest response body a client of this package should read,
	// in bytes: a connect bundle is under 4 KB; error bodies are short.
	MaxResponseBody = 64 << 10
)
