package httpreq

// Wire limits (fixed by the reference; spec/jsonrpc.md §3.7).
const (
	// MaxDeltaBytes is the largest decoded bodyDelta payload, in bytes (1 MiB).
	MaxDeltaBytes = 1 << 20
	// MaxRedirects is how many redirects redirectPolicy "follow" follows.
	MaxRedirects = 10
)

// deniedEnvVars may not be used as valueEnvVar (matched case-insensitively; observed from
// codex 0.169.0, spec/jsonrpc.md §3.7).
var deniedEnvVars = []string{
	"OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_ACCESS_TOKEN", "AWS_ACCESS_KEY_ID",
	"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "OPENAI_IDENTITY_TOKEN_FILE",
	"OPENAI_FEDERATION_RULE_ID", "AZURE_FEDERATED_TOKEN_FILE", "GOOGLE_APPLICATION_CREDENTIALS",
}

// sensitiveHeaders are dropped from a followed redirect once the chain has left the
// request's origin (scheme, host or port changed), whether given directly or built from
// valueEnvVar: observed from codex 0.171.0 and 0.169.0 (reqwest's redirect handling;
// conformance scenario http_redirect_credentials). A same-origin redirect keeps them.
var sensitiveHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Cookie2", "WWW-Authenticate"}

// Implementation limits.
const (
	// deltaReadBytes is the most one body read (one bodyDelta) carries, in bytes: a
	// quarter of MaxDeltaBytes. Measured with the http_stream_local bench row (256 MiB
	// loopback body, shared Go client): 1 MiB deltas 130 MiB/s, 512 KiB 197, 256 KiB 201,
	// 128 KiB 186, 64 KiB 190 (reference 188–204 in the same runs); the stream's memory
	// rise stayed 11–14 MiB for all of them.
	deltaReadBytes = MaxDeltaBytes / 4
)
