package sandbox

import (
	"strings"
)

// Pre-sandbox environment (hardening beyond the reference, which starts its launcher
// and bwrap with the command's environment).
//
// Nothing that runs before the sandbox is in place is started with the command's
// environment: not the launcher stage (this binary re-entered, dynamically linked
// when built with cgo), not bwrap (always dynamically linked), not the inner stage
// (inside the namespaces but before its no_new_privs and seccomp). A variable the
// dynamic loader or libc honours at start-up (LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH,
// GCONV_PATH, GLIBC_TUNABLES, MALLOC_*, …) would otherwise run code, or load a library
// planted by an earlier sandboxed command, in an unconfined process.
//
// Every stage before the command gets a fixed environment of the executor's choosing
// (stageEnv), drawn here:
//
//	codex-sandbox-env=1         the marker: the command environment travels encoded
//	HOME=<the command's HOME>  only when set: bwrap reads it (its cwd when the command
//	                           cwd is hidden); nothing else does
//	codex-sandbox-env:<entry>  one per command entry, in order: "LD_PRELOAD=/x" travels
//	                           as "codex-sandbox-env:LD_PRELOAD=/x"
//
// A name that starts with "codex-sandbox-env:" is one no loader, libc, bwrap or Go
// runtime reads (it is not even a shell identifier). The stage that starts the command
// — the plain or Landlock launcher stage after confining its spawn thread, or the
// inner stage inside bwrap — decodes the entries (commandEnv) and gives them to the
// command exactly as it would have received them before: the stage's Go runtime drops
// later duplicates of a name, so the encoded names (one-to-one with the plain ones)
// are deduplicated the same way, and the PWD bwrap sets for its child is carried over
// (innerCommandEnv). A stage started with the marker refuses to run when its own
// environment holds a variable the loader or libc honours (preStageHazard): the
// environment was not sanitized, so nothing is launched.
//
// Cost: len(stageEnvPrefix) bytes of the execve limits per entry (ARG_MAX,
// MAX_ARG_STRLEN): an environment within a few bytes of them, which the command could
// just have received before, now fails to start (E2BIG, a spawn failure; nothing runs).
//
// A stage started without the marker (a caller other than Launcher.Wrap, as the
// reference's codex-linux-sandbox CLI is started) treats its own environment as the
// command's, and still encodes it before starting bwrap or the inner stage.

const (
	// stageEnvMarker is the name of the marker variable; its value is stageEnvVersion.
	stageEnvMarker  = "codex-sandbox-env"
	stageEnvVersion = "1"
	// stageEnvPrefix precedes every encoded command entry.
	stageEnvPrefix = stageEnvMarker + ":"
)

// stageEnv is the environment every stage before the command starts with: the marker,
// the command's HOME for bwrap, and each entry of cmd encoded (see above).
func stageEnv(cmd []string) []string {
	out := make([]string, 0, len(cmd)+2)
	out = append(out, stageEnvMarker+"="+stageEnvVersion)
	if home, ok := lookupEnv(cmd, "HOME"); ok {
		out = append(out, "HOME="+home)
	}
	for _, kv := range cmd {
		out = append(out, stageEnvPrefix+kv)
	}
	return out
}

// commandEnv returns the command environment carried by a stage's own environment own
// (as os.Environ returns it) and whether own was encoded (holds the marker). Without
// the marker, own is the command environment.
func commandEnv(own []string) (cmd []string, encoded bool) {
	if v, ok := lookupEnv(own, stageEnvMarker); !ok || v != stageEnvVersion {
		return own, false
	}
	cmd = make([]string, 0, len(own))
	for _, kv := range own {
		if e, ok := strings.CutPrefix(kv, stageEnvPrefix); ok && e != "" {
			cmd = append(cmd, e)
		}
	}
	return cmd, true
}

// innerCommandEnv is commandEnv for the inner stage, whose own environment bwrap
// built: an encoded command environment gets the PWD bwrap set (bwrap's
// setenv("PWD", cwd, 1): replace the first PWD, else append), as the command saw it
// when bwrap passed the command environment through.
func innerCommandEnv(own []string) []string {
	cmd, encoded := commandEnv(own)
	if !encoded {
		return cmd
	}
	pwd, ok := lookupEnv(own, "PWD")
	if !ok {
		return cmd
	}
	for i, kv := range cmd {
		if strings.HasPrefix(kv, "PWD=") {
			cmd[i] = "PWD=" + pwd
			return cmd
		}
	}
	return append(cmd, "PWD="+pwd)
}

// preStageHazard returns the name of the first variable in env (a stage's own
// environment) that the dynamic loader or libc honours at start-up or on first use,
// or "" when there is none: the LD_* family, MALLOC_*, and glibc's list of variables
// it drops for set-uid programs (unsecvars.h). Encoded entries never match.
func preStageHazard(env []string) string {
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "MALLOC_") {
			return name
		}
		switch name {
		case "GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH",
			"NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TMPDIR", "TZDIR":
			return name
		}
	}
	return ""
}

// lookupEnv is the first value of name in env, as getenv in a process started with
// env sees it.
func lookupEnv(env []string, name string) (string, bool) {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}
