package sandbox

// ProbeOptions configure Probe. Nil means defaults; never mutated.
type ProbeOptions struct {
	// Backend forces "bubblewrap" or "landlock"; "" or "auto" selects per §3.3.
	Backend string
	// PATH is the executor's own PATH searched for bwrap (default: os.Getenv("PATH")).
	// Only cmd/ reads the environment; tests pass it explicitly.
	PATH string
	// Cwd is the executor cwd; bwrap candidates under it are skipped (default: os.Getwd).
	Cwd string
	// FakeLandlockABI, when non-zero, replaces the kernel's ABI (tests only).
	FakeLandlockABI int
}
