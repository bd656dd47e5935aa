package sandbox

import (
	"os"
	"strings"

	"github.com/execlab/executor/sandbox/policy"
)

// Direct bubblewrap launch: the launcher stage's work done in the caller's process.
//
// For a bubblewrap plan that needs no supervision (no host mount targets to register
// and clean up, no --ro-bind-data descriptors, no managed network) the launcher stage
// would only compute the bwrap argv and execve bwrap. Wrap computes the same argv
// itself and returns bwrap as the command, saving one start of this (large) binary
// per sandboxed launch. Every other plan, and every plan whose construction fails,
// goes through the stage, which reports the failure exactly as before (exit code and
// message on the command's stderr).

// directBwrap returns the bwrap command for a, or nil when the plan needs the stage.
// env is the command environment (its TMPDIR locates the mount registry, as the
// stage's would).
func (l *Launcher) directBwrap(a *stageArgs, p *policy.Policy, plan policy.Plan, env []string) []string {
	if a.backend != BackendBubblewrap || a.legacyLandlock || plan.Managed {
		return nil
	}
	regDir := registryPathFor(envValue(env, "TMPDIR"))
	if fi, err := os.Lstat(regDir); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil // the stage reports the symlinked registry
	}
	mp, err := buildMounts(p, regDir, mountOptions{dry: true, roBindFD: a.hasFeature("ro-bind-fd")})
	if err != nil || len(mp.targets) > 0 || len(mp.dataFDs) > 0 {
		return nil
	}
	return bwrapArgv(a, plan, mp, l.exe, nil)
}

// envValue is the last value of name in env ("" if absent), as getenv in a process
// started with env would see it.
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}
