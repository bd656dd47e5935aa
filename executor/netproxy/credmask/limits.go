package credmask

// Wire constants: fixed by the reference (codex 0.171.0), spec/network-proxy.md §9.
const (
	// EnvBrokerActive is set to "1" in a masked child's environment (§9.2).
	EnvBrokerActive = "CODEX_NETWORK_PROXY_CREDENTIAL_BROKER_ACTIVE"
	// EnvBrokeredCredentials holds the JSON array of [name, dummy] pairs (§9.2).
	EnvBrokeredCredentials = "CODEX_NETWORK_PROXY_BROKERED_CREDENTIALS"
	// aliasPrefix names every masked variable in EnvBrokeredCredentials; canonical
	// provider variables appear a second time under their bare name (probed 0.171.0).
	aliasPrefix = "@alias:"

	// envGHHost names the GitHub Enterprise host of the enterprise token variables.
	envGHHost = "GH_HOST"

	// UnavailableLogText is logged (info) when masking is requested but the launch is
	// not a plain `bash -c SCRIPT` (§9.1).
	UnavailableLogText = "Credential masking is unavailable for this shell startup; preserving shell profiles and snapshots and running with unmasked credentials."

	// unprotectedLogText is logged (warn) when a custom provider's credential has no
	// destination in this environment (url_prefix_from_env unset) and stays real.
	unprotectedLogText = "Credential masking could not protect some environment credentials; continuing with those values unmasked."

	// caDirName is the directory under $CODEX_HOME that holds the CA certificate and
	// the trust bundle: proxy/ca-<sha256 of the file>.pem and
	// proxy/ca-bundle-<sha256 of the file>.pem (probed 0.171.0; the key is never written).
	caDirName          = "proxy"
	caCertPrefix       = "ca-"
	caBundlePrefix     = "ca-bundle-"
	caFileSuffix       = ".pem"
	githubMinLen       = 40 // GitHub dummies are at least this long (reference providers.rs)
	openAIMinLen       = 51 // OpenAI dummies are at least this long (reference providers.rs)
	maskedMarker       = "masked"
	defaultGitHubPrefx = "ghp_"
	openAIKeyPrefix    = "sk-" // an OpenAI key's shape starts here (scan.go)
)

// CAEnvVars are the 13 variables that point at the trust bundle when masking is on
// (§9.2), in the spec's order.
var CAEnvVars = [...]string{
	"SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
	"GIT_SSL_CAINFO", "CARGO_HTTP_CAINFO", "PIP_CERT", "NPM_CONFIG_CAFILE",
	"npm_config_cafile", "BUNDLE_SSL_CA_CERT", "DENO_CERT",
	"CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", "CODEX_CA_CERTIFICATE",
}

// Implementation limits: our choices.
const (
	// MaxCredentialLen bounds a value we broker (bytes); longer values stay unmasked.
	MaxCredentialLen = 4096
	// MaxHeaderValueLen bounds a header value the rewriter inspects (bytes); a longer
	// one is forwarded untranslated (§9.3 "over-long matches").
	MaxHeaderValueLen = 16 << 10
	// MaxProviders bounds the custom providers compiled per launch.
	MaxProviders = 64
	// MaxPatternLen bounds one custom pattern's source (bytes).
	MaxPatternLen = 1024
	// minEmbeddedLen: a real value at least this long is masked wherever it occurs
	// inside another variable's value; a shorter one only as the whole value (probed
	// 0.171.0: "pre padded-value-123 post" masked, GITHUB_TOKEN=x's "x" left alone).
	minEmbeddedLen = 8
	// maxStraysPerValue bounds the custom-pattern matches taken from one value.
	maxStraysPerValue = 64
	// maxRepeatExtra bounds how far beyond its minimum a generated repetition goes
	// (probed on 0.171.0: "key-[a-z0-9]+" and "x[0-9]*" gave 10 to 63 repetitions).
	maxRepeatExtra = 64
	// maxGeneratedLen bounds a generated dummy (bytes).
	maxGeneratedLen = MaxCredentialLen
	// generateAttempts bounds the retries of the regex generator per dummy.
	generateAttempts = 64
	// LeafCacheSize bounds the minted leaf certificates kept per CA (LRU).
	LeafCacheSize = 256
	// maxSystemRootsBytes bounds the system root bundle copied into the trust bundle.
	maxSystemRootsBytes = 4 << 20
)
