package process

import (
	"sort"
	"strings"

	"github.com/execlab/executor/executor/protocol"
)

// Child environment (spec/jsonrpc.md §5.5).

// coreEnvNames are the variables inherit "core" keeps, matched case-insensitively.
var coreEnvNames = []string{
	"HOME", "LOGNAME", "PATH", "SHELL", "USER", "TMPDIR", "TEMP", "TMP", "LANG", "LC_ALL", "LC_CTYPE",
}

// defaultEnvExcludes are dropped from the policy environment unless
// ignoreDefaultExcludes is set.
var defaultEnvExcludes = []string{"*KEY*", "*SECRET*", "*TOKEN*"}

// alwaysRemovedFold are removed last in every case, compared case-insensitively.
var alwaysRemovedFold = []string{"OPENAI_IDENTITY_TOKEN_FILE", "OPENAI_FEDERATION_RULE_ID"}

// alwaysRemovedExact is removed last in every case, exact case only.
const alwaysRemovedExact = "CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE"

// childEnv computes the child's environment. serverEnv is the server's environment as
// os.Environ returns it (only read when a policy inherits).
func childEnv(env map[string]string, policy *protocol.ExecEnvPolicy, serverEnv func() []string) map[string]string {
	out := make(map[string]string, len(env))
	if policy != nil {
		switch policy.Inherit {
		case protocol.EnvInheritAll, protocol.EnvInheritCore:
			for _, kv := range serverEnv() {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					continue
				}
				if policy.Inherit == protocol.EnvInheritCore && !isCoreEnvName(k) {
					continue
				}
				out[k] = v
			}
		}
		if !policy.IgnoreDefaultExcludes {
			deleteMatching(out, defaultEnvExcludes)
		}
		deleteMatching(out, policy.Exclude)
		for k, v := range policy.Set {
			out[k] = v
		}
		if len(policy.IncludeOnly) > 0 {
			for k := range out {
				if !matchesAny(k, policy.IncludeOnly) {
					delete(out, k)
				}
			}
		}
	}
	for k, v := range env {
		out[k] = v
	}
	for k := range out {
		if k == alwaysRemovedExact {
			delete(out, k)
			continue
		}
		for _, name := range alwaysRemovedFold {
			if strings.EqualFold(k, name) {
				delete(out, k)
			}
		}
	}
	return out
}

func isCoreEnvName(k string) bool {
	for _, name := range coreEnvNames {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

func deleteMatching(m map[string]string, patterns []string) {
	if len(patterns) == 0 {
		return
	}
	for k := range m {
		if matchesAny(k, patterns) {
			delete(m, k)
		}
	}
}

func matchesAny(name string, patterns []string) bool {
	for _, p := range patterns {
		if globMatchFold(p, name) {
			return true
		}
	}
	return false
}

// globMatchFold reports whether name matches pattern, where '*' matches any run of
// characters, '?' exactly one, and letters compare case-insensitively (Unicode simple
// folding). Every other character is literal.
func globMatchFold(pattern, name string) bool {
	p, n := []rune(pattern), []rune(name)
	// Iterative matcher with single-star backtracking: linear in practice, O(len(p)·len(n))
	// worst case.
	pi, ni := 0, 0
	starP, starN := -1, 0
	for ni < len(n) {
		switch {
		case pi < len(p) && p[pi] == '*':
			starP, starN = pi, ni
			pi++
		case pi < len(p) && (p[pi] == '?' || runeEqualFold(p[pi], n[ni])):
			pi++
			ni++
		case starP >= 0:
			starN++
			pi, ni = starP+1, starN
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

func runeEqualFold(a, b rune) bool {
	return a == b || strings.EqualFold(string(a), string(b))
}

// envList renders env as "KEY=VALUE" entries for execve.
// envList renders env as KEY=VALUE entries sorted by key in byte order, the order the
// reference's BTreeMap gives the child (observed from codex 0.169.0 with /usr/bin/env).
func envList(env map[string]string) []string {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(env))
	for _, k := range keys {
		out = append(out, k+"="+env[k])
	}
	return out
}
