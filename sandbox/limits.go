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
)

// Implementation constants (our choice).
const (
	// probeTimeout bounds each startup probe child (spec/sandbox.md §3.3: 5 s).
	probeTimeout = 5 * time.Second
	// probeStderrLimit caps probe stderr kept for matching (spec/sandbox.md §3.3: 64 KiB).
	probeStderrLimit = 64 << 10
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
)
