package process_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/executor/protocol"
)

// No envPolicy: the child env is exactly env (end to end, via /usr/bin/env).
func TestEnv_ExactWithoutPolicy(t *testing.T) {
	m := newManager(t, nil)
	p := startParams("p", tmpURI(t), "/usr/bin/env")
	p.Env = map[string]string{"ONLY_THIS": "1"}
	mustStart(t, m, p)
	out, _ := readUntilClosed(t, m, "p")
	if got := string(out[protocol.StreamStdout]); got != "ONLY_THIS=1\n" {
		t.Fatalf("child env = %q, want exactly %q", got, "ONLY_THIS=1\n")
	}
}

func TestEnv_Policy(t *testing.T) {
	server := []string{
		"HOME=/root", "Path=/mixed", "PATH=/bin", "LANG=C", "LANGUAGE=en", "TERM=xterm", "LC_NUMERIC=C",
		"API_KEY=k", "MY_SECRET=s", "GITHUB_TOKEN=t", "PLAIN=p", "FOO_BAR=f",
		"OPENAI_IDENTITY_TOKEN_FILE=x", "CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE=1",
	}
	pol := func(inherit protocol.EnvInherit, ignore bool, exclude []string, set map[string]string, includeOnly []string) *protocol.ExecEnvPolicy {
		return &protocol.ExecEnvPolicy{Inherit: inherit, IgnoreDefaultExcludes: ignore, Exclude: exclude, Set: set, IncludeOnly: includeOnly}
	}
	tests := []struct {
		name   string
		env    map[string]string
		policy *protocol.ExecEnvPolicy
		want   map[string]string
	}{
		{"no policy is exact", map[string]string{"ONLY_THIS": "1", "MY_TOKEN": "t"}, nil,
			map[string]string{"ONLY_THIS": "1", "MY_TOKEN": "t"}},
		{"no policy still strips internal names", map[string]string{"A": "1", "openai_federation_rule_id": "x", "CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE": "1", "codex_exec_server_exit_on_stdin_close": "kept"}, nil,
			map[string]string{"A": "1", "codex_exec_server_exit_on_stdin_close": "kept"}},
		{"policy then overlay", map[string]string{"OVERLAY": "overlay", "POLICY_SET": "overlay-wins"},
			pol(protocol.EnvInheritNone, true, nil, map[string]string{"POLICY_SET": "policy"}, nil),
			map[string]string{"OVERLAY": "overlay", "POLICY_SET": "overlay-wins"}},
		{"core keeps core names case-insensitively", nil, pol(protocol.EnvInheritCore, false, nil, nil, nil),
			map[string]string{"HOME": "/root", "Path": "/mixed", "PATH": "/bin", "LANG": "C"}},
		{"all minus default excludes", nil, pol(protocol.EnvInheritAll, false, nil, nil, nil),
			map[string]string{"HOME": "/root", "Path": "/mixed", "PATH": "/bin", "LANG": "C", "LANGUAGE": "en", "TERM": "xterm", "LC_NUMERIC": "C", "PLAIN": "p", "FOO_BAR": "f"}},
		{"ignoreDefaultExcludes keeps credentials", nil, pol(protocol.EnvInheritAll, true, []string{"*"}, map[string]string{"S": "1"}, nil),
			map[string]string{"S": "1"}},
		{"exclude globs are case-insensitive", nil, pol(protocol.EnvInheritAll, false, []string{"l*", "?ATH", "foo_*"}, nil, nil),
			map[string]string{"HOME": "/root", "TERM": "xterm", "PLAIN": "p"}},
		{"includeOnly after set, env overlays after", map[string]string{"EXTRA": "e"},
			pol(protocol.EnvInheritAll, false, nil, map[string]string{"SET_ME": "1", "OTHER": "o"}, []string{"set_*", "home"}),
			map[string]string{"HOME": "/root", "SET_ME": "1", "EXTRA": "e"}},
		{"set and env names with TOKEN survive", map[string]string{"MY_TOKEN": "t"},
			pol(protocol.EnvInheritNone, false, nil, map[string]string{"SET_TOKEN": "s"}, nil),
			map[string]string{"MY_TOKEN": "t", "SET_TOKEN": "s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := process.ChildEnv(tt.env, tt.policy, server)
			if !maps.Equal(got, tt.want) {
				t.Fatalf("env = %v, want %v", sorted(got), sorted(tt.want))
			}
		})
	}
}

func sorted(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

func TestGlobMatchFold(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*KEY*", "api_key", true},
		{"*KEY*", "KEYS", true},
		{"*KEY*", "KY", false},
		{"?ATH", "path", true},
		{"?ATH", "PPATH", false},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
		{"", "", true},
		{"*", "", true},
		{"[a]", "a", false},
		{"[a]", "[A]", true},
	}
	for _, tt := range tests {
		if got := process.GlobMatchFold(tt.pattern, tt.name); got != tt.want {
			t.Errorf("glob(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

// An envPolicy inheriting "all" sees the server's environment end to end.
func TestEnv_PolicyInheritsServerEnv(t *testing.T) {
	t.Setenv("H4_PROCESS_TEST_VAR", "from-server")
	m := newManager(t, nil)
	p := startParams("p", tmpURI(t), "/usr/bin/env")
	p.Env = map[string]string{}
	p.EnvPolicy = &protocol.ExecEnvPolicy{Inherit: protocol.EnvInheritAll, IncludeOnly: []string{"H4_*"}}
	mustStart(t, m, p)
	out, _ := readUntilClosed(t, m, "p")
	if got := strings.TrimSpace(string(out[protocol.StreamStdout])); got != "H4_PROCESS_TEST_VAR=from-server" {
		t.Fatalf("child env = %q, want H4_PROCESS_TEST_VAR=from-server", got)
	}

}
