package sandbox

import (
	"fmt"
	"strings"
)

// Backend names (spec/sandbox.md §3.3).
const (
	BackendAuto       = "auto"
	BackendBubblewrap = "bubblewrap"
	BackendLandlock   = "landlock"
	BackendNone       = "none"
)

// Report is the startup capability probe (spec/sandbox.md §3.3). It is the JSON of
// `executor sandbox-info` and of environment/info's `sandboxSupport`. Plain value;
// safe to copy and share.
type Report struct {
	Backend        string     `json:"backend"`
	UserNamespaces bool       `json:"userNamespaces"`
	Seccomp        bool       `json:"seccomp"`
	LandlockABI    int        `json:"landlockAbi"`
	ProcMount      bool       `json:"procMount"`
	Bubblewrap     *BwrapInfo `json:"bubblewrap"`
	Warnings       []string   `json:"warnings"`
	// unavailable is the -32602 reason used when no backend exists.
	unavailable string
}

// BwrapInfo describes the chosen bwrap binary; nil in Report when none is usable.
type BwrapInfo struct {
	Path     string   `json:"path"`
	Version  string   `json:"version"`
	Features []string `json:"features"`
}

// LogLine renders the one-line startup summary, e.g.
// "sandbox backend=bubblewrap bwrap=/usr/bin/bwrap 0.8.0 features=perms,as-pid-1,ro-bind-fd
// userns=ok seccomp=ok landlock_abi=7 proc=ok".
func (r *Report) LogLine() string {
	okno := func(b bool) string {
		if b {
			return "ok"
		}
		return "no"
	}
	bw := "bwrap=none"
	if r.Bubblewrap != nil {
		bw = fmt.Sprintf("bwrap=%s %s features=%s", r.Bubblewrap.Path, r.Bubblewrap.Version,
			strings.Join(r.Bubblewrap.Features, ","))
	}
	return fmt.Sprintf("sandbox backend=%s %s userns=%s seccomp=%s landlock_abi=%d proc=%s",
		r.Backend, bw, okno(r.UserNamespaces), okno(r.Seccomp), r.LandlockABI, okno(r.ProcMount))
}

// chooseBackend applies §3.3: bubblewrap if usable with user namespaces, else landlock
// if ABI ≥ 6 and seccomp, else none; forced names are honoured only when available.
func (r *Report) chooseBackend(forced string) {
	bwrapOK := r.Bubblewrap != nil && r.UserNamespaces && r.Seccomp
	llOK := r.LandlockABI >= landlockMinABI && r.Seccomp
	switch {
	case (forced == "" || forced == BackendAuto || forced == BackendBubblewrap) && bwrapOK:
		r.Backend = BackendBubblewrap
	case (forced == "" || forced == BackendAuto || forced == BackendLandlock) && llOK:
		r.Backend = BackendLandlock
	default:
		r.Backend = BackendNone
		switch {
		case !r.Seccomp:
			r.unavailable = "seccomp is unavailable"
		case r.Bubblewrap == nil && forced != BackendLandlock:
			r.unavailable = msgNoBwrap
		case forced == BackendLandlock:
			r.unavailable = fmt.Sprintf("Landlock ABI %d is below %d", r.LandlockABI, landlockMinABI)
		default:
			r.unavailable = "user namespaces are unavailable"
		}
	}
}
