package sandbox

import "time"

// Wire constants, fixed by the reference (codex 0.169.0) or spec/sandbox.md.
const (
	// SandboxTypeLinuxSeccomp / SandboxTypeNone are process/start's sandboxType values
	// (spec/sandbox.md §2.9).
	SandboxTypeLinuxSeccomp = "linuxSeccomp"
	SandboxTypeNone         = "none"

	// StageArgv0 is the argv[0] basename that dispatches to the sandbox CLI, and
	// StageFlag the leading flag that does the same when argv[0] cannot be set
	// (bwrap 0.8.0 has no --argv0) (spec/sandbox.md §3.2).
	StageArgv0 = "codex-linux-sandbox"
	StageFlag  = "--codex-linux-sandbox"
	// FSHelperFlag dispatches to the sandboxed filesystem helper (spec/sandbox.md §4).
	FSHelperFlag = "--codex-run-as-fs-helper"

	// exitBuildFailure is the launcher's exit code for "error building bubblewrap
	// command" and the inner stage's failures (spec/sandbox.md §2.10).
	exitBuildFailure = 1
	// exitPanic is the exit code of the reference's panicking rows (Rust panic = 101).
	exitPanic = 101
	// panicPrefix makes every 101 message contain "sandbox" so sandboxDenied is true,
	// as the reference's panic banner does (spec/sandbox.md §2.10).
	panicPrefix = "codex-linux-sandbox: "

	// registryPrefix is the synthetic mount-target registry directory name under
	// $TMPDIR (spec/sandbox.md §2.7), suffixed with the euid.
	registryPrefix = "codex-bwrap-synthetic-mount-targets-"
	// daemonDirPrefix is the app-server socket directory under /tmp, suffixed with the
	// euid, hidden from sandboxed commands (spec/sandbox.md §2.7).
	daemonDirPrefix = "/tmp/codex-daemon-"

	// maxGlobMatches is the most deny-glob matches one launch expands (spec/sandbox.md §3.6).
	maxGlobMatches = 8192
	// landlockMinABI is the lowest Landlock ABI the degraded backend accepts (§3.3).
	landlockMinABI = 6

	// proxyDirPrefix names the launcher's private proxy socket directory under $TMPDIR,
	// suffixed with "<pid>-<n>" (spec/sandbox.md §3.10).
	proxyDirPrefix = "codex-linux-sandbox-proxy-"
	// Default proxy ports when an endpoint names none (observed from codex 0.169.0:
	// https 443, socks4/4a/5/5h 1080, every other scheme 80; spec/sandbox.md §3.10).
	defaultPortHTTP  = 80
	defaultPortHTTPS = 443
	defaultPortSOCKS = 1080
)

// proxyEnvKeys are the variables the managed network routes, matched
// case-insensitively against the command env (spec/sandbox.md §3.10).
var proxyEnvKeys = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "FTP_PROXY",
	"YARN_HTTP_PROXY", "YARN_HTTPS_PROXY", "NPM_CONFIG_HTTP_PROXY", "NPM_CONFIG_HTTPS_PROXY",
	"NPM_CONFIG_PROXY", "BUNDLE_HTTP_PROXY", "BUNDLE_HTTPS_PROXY", "PIP_PROXY",
	"DOCKER_HTTP_PROXY", "DOCKER_HTTPS_PROXY"}

// Implementation constants (our choice).
const (
	// probeTimeout bounds each startup probe child (spec/sandbox.md §3.3: 5 s).
	probeTimeout = 5 * time.Second
	// probeStderrLimit caps probe stderr kept for matching (spec/sandbox.md §3.3: 64 KiB).
	probeStderrLimit = 64 << 10

	// proxyDialTimeout bounds each bridge's connect to the next hop (host proxy or
	// socket), so a stuck proxy cannot pin a bridge goroutine forever.
	proxyDialTimeout = 10 * time.Second
	// maxProxyDirAttempts bounds the <n> suffixes tried for the socket directory when a
	// name is taken (a stale directory of a recycled pid).
	maxProxyDirAttempts = 64
	// maxSocketPath is the longest Unix socket path bind accepts (sun_path is 108
	// bytes including the NUL, unix(7)); a longer $TMPDIR falls back to /tmp.
	maxSocketPath = 107
	// maxStageFlagJSON caps --managed-network and --proxy-route-spec values (bytes);
	// both are produced by this binary and are far smaller.
	maxStageFlagJSON = 64 << 10
)

// Messages with exact text (spec/sandbox.md §2.10, §3.5, §3.8).
const (
	msgRetainedCaps       = "Linux sandbox retained effective or permitted capabilities"
	msgMissingProfile     = "missing permission profile configuration"
	msgNoCommand          = "No command specified to execute."
	msgLegacyLandlock     = "filesystem-restricted execution requires bubblewrap to isolate app-server sockets"
	msgBuildPrefix        = "error building bubblewrap command: "
	msgNoBwrap            = "bubblewrap is unavailable: no usable bwrap was found on PATH"
	msgUnenforceable      = "sandbox intent cannot be enforced on this executor: "
	msgRuntimeUnavailable = "sandbox runtime paths are not configured"
	// msgEnvHazard (our wording) is a stage's refusal to run when its own environment
	// holds a variable the loader or libc honours (env.go); the name follows, never
	// the value.
	msgEnvHazard = "sandbox: refusing to launch: the environment before the sandbox holds "

	// Managed network fail-closed rows (exit 101, spec/sandbox.md §2.10), observed text.
	msgProxyBridgePrefix = "failed to prepare host proxy routing bridge: "
	msgProxyNoEnv        = "managed proxy mode requires proxy environment variables"
	msgProxyNoLoopback   = "managed proxy mode requires parseable loopback proxy endpoints"
	msgProxyOutsidePorts = "proxy endpoint is outside the managed sandbox context"
	// msgTransparentNoSOCKS refuses transparent TCP without a loopback SOCKS5 proxy
	// variable to carry the captured connections, under msgTransparentPrefix (observed
	// from codex 0.171.0 with --linux-sandbox-transparent-tcp and enableSocks5 false).
	msgTransparentNoSOCKS = "transparent TCP requires managed SOCKS5"
	// msgProxyInnerPrefix prefixes inner-stage bridge failures (our wording: the
	// reference's inner bridge has no observed failure text).
	msgProxyInnerPrefix = "failed to start sandbox proxy routing bridge: "
	// msgTransparentPrefix prefixes transparent TCP setup failures (codex 0.171.0's).
	msgTransparentPrefix = "failed to prepare transparent TCP: "
)
