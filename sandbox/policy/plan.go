package policy

// Network modes and launch-plan selection (spec/sandbox.md §2.8, §2.9, §3.4).

// SeccompMode is the syscall filter a plan installs (spec/sandbox.md §3.9).
type SeccompMode uint8

const (
	SeccompNone               SeccompMode = iota // no filter
	SeccompRestricted                            // no network at all
	SeccompProxyRouted                           // only AF_INET/AF_INET6 sockets (managed proxy)
	SeccompVmSocketRestricted                    // no AF_VSOCK, no io_uring
)

var seccompNames = [...]string{"none", "restricted", "proxy-routed", "vm-socket-restricted"}

func (m SeccompMode) String() string {
	if int(m) < len(seccompNames) {
		return seccompNames[m]
	}
	return "invalid"
}

// ParseSeccompMode is the inverse of SeccompMode.String.
func ParseSeccompMode(s string) (SeccompMode, bool) {
	for i, n := range seccompNames {
		if n == s {
			return SeccompMode(i), true
		}
	}
	return 0, false
}

// Plan is the shape of a launch: one row of the spec/sandbox.md §2.8 table.
type Plan struct {
	// Row is the §2.8 table row, 1–5.
	Row int
	// Isolated is true when the plan needs a mount view (bubblewrap, or the degraded
	// Landlock backend when expressible); false means the launcher execs the command
	// directly, with Seccomp on the exec'ing thread if not SeccompNone.
	Isolated bool
	// UnshareNet puts the command in its own network namespace (loopback only).
	UnshareNet bool
	Seccomp    SeccompMode
	// Managed is proxy-only networking (enforceManagedNetwork).
	Managed bool
}

// Plan selects the §2.8 row for p. managed is the request's enforceManagedNetwork.
func (p *Policy) Plan(managed bool) Plan {
	full := p.FullWrite()
	switch {
	case managed:
		return Plan{Row: 5, Isolated: true, UnshareNet: true, Seccomp: SeccompProxyRouted, Managed: true}
	case p.Network == NetworkEnabled && full:
		return Plan{Row: 1}
	case p.Network == NetworkEnabled:
		return Plan{Row: 2, Isolated: true, Seccomp: SeccompVmSocketRestricted}
	case full:
		return Plan{Row: 3, Seccomp: SeccompRestricted}
	default:
		return Plan{Row: 4, Isolated: true, UnshareNet: true, Seccomp: SeccompRestricted}
	}
}

// RequiresPlatformSandbox is the per-request log predicate of spec/sandbox.md §2.9:
// managed ⇒ yes; network restricted ⇒ yes unless external; network enabled ⇒ yes iff
// the file system is restricted and not FullWrite.
func (p *Policy) RequiresPlatformSandbox(managed bool) bool {
	switch {
	case managed:
		return true
	case p.Network == NetworkRestricted:
		return p.Type != ProfileExternal
	default:
		return p.Restricted && !p.FullWrite()
	}
}

// NeedsFSHelper reports whether an fs/* call must run in the sandboxed helper
// (spec/sandbox.md §2.9): the profile is restricted and not FullWrite, except that
// read-only operations (fs/readFile, fs/getMetadata, fs/open) under a FullRead profile
// stay in-process.
func (p *Policy) NeedsFSHelper(readOnlyOp bool) bool {
	if !p.Restricted || p.FullWrite() {
		return false
	}
	return !(readOnlyOp && p.FullRead())
}
