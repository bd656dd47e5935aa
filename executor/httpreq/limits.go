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
