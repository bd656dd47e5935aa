package envconfig

import "time"

// Wire constants: fixed by the reference (spec/capabilities-0.171.0.md §6, PROBED on
// codex 0.171.0 and 0.169.0 unless marked READ).
const (
	// DefaultSystemDir holds the system config, the system requirements and the legacy
	// managed config on Unix (READ: codex-config loader, SYSTEM_CONFIG_TOML_FILE_UNIX).
	DefaultSystemDir = "/etc/codex"
	// ConfigFile is the name of the system, user and project config files.
	ConfigFile = "config.toml"
	// RequirementsFile is read from the system dir only; $CODEX_HOME/requirements.toml
	// is not read (PROBED).
	RequirementsFile = "requirements.toml"
	// ManagedConfigFile is the legacy managed config, a config layer on top of all
	// others and the source of derived requirements.
	ManagedConfigFile = "managed_config.toml"
	// ProjectConfigDir is the per-directory folder of project layers.
	ProjectConfigDir = ".codex"
	// DefaultCodexHomeDir is CODEX_HOME's default, under the user's home.
	DefaultCodexHomeDir = ".codex"
	// ProjectRootMarkersKey overrides DefaultProjectRootMarkers from the system, user
	// or managed config (READ: project_root_markers_from_config).
	ProjectRootMarkersKey = "project_root_markers"
	// TrustedLevel is the trust_level value that enables a project's layers.
	TrustedLevel = "trusted"
	// UntrustedLevel is the other accepted trust_level value.
	UntrustedLevel = "untrusted"
)

// DefaultProjectRootMarkers find the project root above cwd. ".git" counts when it is a
// file (a worktree's or submodule's gitfile, even empty) or a directory holding HEAD;
// an empty ".git" directory is not a marker (PROBED).
var DefaultProjectRootMarkers = []string{".git"}

// projectDenylist are removed from project layers: repository contents must not choose
// where credentials go or which commands run (READ: PROJECT_LOCAL_CONFIG_DENYLIST;
// PROBED for model_provider, profiles, notify and features.respect_system_proxy).
var projectDenylist = []string{
	"openai_base_url",
	"chatgpt_base_url",
	"apps_mcp_product_sku",
	"model_provider",
	"model_providers",
	"notify",
	"profile",
	"profiles",
	"experimental_realtime_webrtc_call_base_url",
	"experimental_realtime_ws_base_url",
	"otel",
}

// projectDeniedFeatures are removed from a project layer's [features] table.
var projectDeniedFeatures = []string{"respect_system_proxy"}

// Implementation limits: our choice.
const (
	// MaxConfigFileBytes bounds each config file read (16 MiB). The reference reads any
	// size (PROBED: a 1.1 MB result was returned); a larger file fails the request
	// with -32603 rather than exhausting memory.
	MaxConfigFileBytes = 16 << 20
	// hostLookupTimeout bounds the one DNS lookup of the canonical host name per
	// process (hostname.go); the reference blocks in getaddrinfo without a bound.
	hostLookupTimeout = 5 * time.Second
)
