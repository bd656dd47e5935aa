package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/execlab/executor/internal/refbin"
)

// Differential tests of `executor exec-server` against every released `codex exec-server`:
// the same argv (and environment) on both, and the same outcome: started (a ws:// line,
// or a clean exit 0 for stdio and help) or the same exit status (2 for usage errors,
// 1 for start-up errors). For the exit-1 cases listed in sameText, the first error line
// must match too.

// execServerOutcome is how one run ended.
type execServerOutcome struct {
	listening bool
	exit      int
	errLine   string
}

func (o execServerOutcome) String() string {
	if o.listening {
		return "listening"
	}
	return "exit " + strconv.Itoa(o.exit) + " " + o.errLine
}

// runExecServerOnce runs argv (after "exec-server" for the reference, after "exec-server"
// for ours too) with home as CODEX_HOME and extra environment, stdin /dev/null; it stops
// at the first ws:// line (listening) or the exit.
func runExecServerOnce(t *testing.T, bin, home string, env []string, argv []string) execServerOutcome {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"exec-server"}, argv...)...)
	cmd.Dir = home
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "CODEX_HOME=" + home,
		"RUST_BACKTRACE=0", "RUST_LOG=off"}, env...)
	res := listenOrExit(t, cmd)
	if res.TimedOut {
		t.Errorf("%q: neither listening nor exited within 30 s (stderr %q)", argv, res.Stderr)
		return execServerOutcome{exit: -1}
	}
	res.stop()
	return execServerOutcome{listening: res.URL != "", exit: res.Exit, errLine: res.ErrLine}
}

// execServerCase is one command line of the table.
type execServerCase struct {
	name     string
	args     []string
	env      []string
	config   string // config.toml body ("" none)
	sameText bool   // exit 1: the first error line must match too
	// since is the first release that knows the case's flags ("" all): 0.169.0 has no
	// --linux-sandbox-transparent-tcp, --tcp-upstream-proxy.
	since string
}

func execServerCases() []execServerCase {
	L := []string{"--listen", "ws://127.0.0.1:0"}
	R := []string{"--remote", "http://127.0.0.1:1", "--environment-id", "env-1"}
	CN := []string{"--connect", "ws://127.0.0.1:1"}
	w := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	a := func(s ...string) []string { return s }
	return []execServerCase{
		// Parsing rules.
		{name: "listen", args: L},
		{name: "listen_equals", args: a("--listen=ws://127.0.0.1:0")},
		{name: "listen_twice", args: a("--listen=ws://127.0.0.1:0", "--listen", "ws://127.0.0.1:0")},
		{name: "listen_no_value", args: a("--listen")},
		{name: "switch_with_value", args: a("--strict-config=true")},
		{name: "switch_twice", args: w(a("--strict-config", "--strict-config"), L)},
		{name: "unknown_flag", args: a("--bogus")},
		{name: "unknown_subcommand", args: a("bogus")},
		{name: "after_double_dash", args: a("--", "x")},
		{name: "help", args: a("--help")},
		{name: "help_short", args: a("-h")},
		{name: "help_subcommand", args: a("help")},
		{name: "help_forward", args: a("help", "forward")},
		{name: "forward_help", args: a("forward", "--help")},
		// Listener.
		{name: "listen_stdio", args: a("--listen", "stdio")},
		{name: "listen_stdio_uri", args: a("--listen", "stdio://")},
		{name: "listen_host_name", args: a("--listen", "ws://localhost:1"), sameText: true},
		{name: "listen_http", args: a("--listen", "http://127.0.0.1:0"), sameText: true},
		{name: "stdio_with_auth", args: a("--listen", "stdio", "--ws-auth", "capability-token", "--ws-token-sha256", strings.Repeat("ab", 32)), sameText: true},
		{name: "auth_without_source", args: a("--listen", "stdio", "--ws-auth", "capability-token"), sameText: true},
		{name: "auth_bad_mode", args: a("--ws-auth", "bogus")},
		{name: "auth_flags_without_mode", args: w(a("--ws-audience", "a"), L), sameText: true},
		{name: "auth_empty_path", args: a("--ws-auth", "capability-token", "--ws-token-file", "")},
		{name: "auth_skew_not_number", args: a("--ws-max-clock-skew-seconds", "x")},
		{name: "concurrent", args: w(a("--concurrent-requests", "4"), L)},
		{name: "concurrent_huge", args: w(a("--concurrent-requests", "99999999999"), L)},
		{name: "concurrent_zero", args: a("--concurrent-requests", "0")},
		{name: "concurrent_negative", args: a("--concurrent-requests", "-1")},
		{name: "concurrent_text", args: a("--concurrent-requests", "abc")},
		// Sandbox and proxy flags.
		{name: "pid_inherit", args: w(a("--linux-sandbox-pid-namespace", "inherit"), L)},
		{name: "pid_isolate", args: w(a("--linux-sandbox-pid-namespace=isolate"), L)},
		{name: "pid_bad", args: a("--linux-sandbox-pid-namespace", "Inherit")},
		{name: "transparent_tcp", args: w(a("--linux-sandbox-transparent-tcp"), L), since: "0.171.0"},
		{name: "upstream_proxy", args: w(a("--tcp-upstream-proxy", "127.0.0.1:3128"), L), since: "0.171.0"},
		{name: "upstream_proxy_no_port", args: a("--tcp-upstream-proxy", "proxy"), since: "0.171.0"},
		{name: "upstream_proxy_port_zero", args: a("--tcp-upstream-proxy", "proxy:0"), since: "0.171.0"},
		{name: "private_ips", args: w(a("--proxy-private-ips-via-upstream"), L)},
		{name: "private_ips_env_true", args: L, env: a("CODEX_EXEC_SERVER_PROXY_PRIVATE_IPS_VIA_UPSTREAM=true")},
		{name: "private_ips_env_false", args: L, env: a("CODEX_EXEC_SERVER_PROXY_PRIVATE_IPS_VIA_UPSTREAM=false")},
		{name: "private_ips_env_1", args: L, env: a("CODEX_EXEC_SERVER_PROXY_PRIVATE_IPS_VIA_UPSTREAM=1")},
		{name: "private_ips_env_empty", args: L, env: a("CODEX_EXEC_SERVER_PROXY_PRIVATE_IPS_VIA_UPSTREAM=")},
		// Configuration.
		{name: "config_override", args: w(a("-c", "model=\"o3\"", "-cfoo=1", "-c=bar", "--config", "x.y=[1"), L)},
		{name: "enable_known", args: w(a("--enable", "unified_exec", "--disable", "shell_snapshot"), L)},
		{name: "enable_unknown", args: w(a("--enable", "no_such_feature"), L), sameText: true},
		{name: "disable_unknown", args: w(a("--disable", "no_such_feature"), L), sameText: true},
		{name: "enable_empty", args: w(a("--enable="), L), sameText: true},
		{name: "strict_clean", args: w(a("--strict-config", "-c", "model=\"o3\"", "-c", "features.unified_exec=true"), L)},
		{name: "strict_unknown_override", args: w(a("--strict-config", "-c", "foo=1"), L), sameText: true},
		{name: "strict_unknown_feature_override", args: w(a("--strict-config", "-c", "features.nope=true"), L), sameText: true},
		{name: "strict_feature_not_bool", args: w(a("--strict-config", "-c", "features.unified_exec=3"), L)},
		{name: "strict_string_key_int", args: w(a("--strict-config", "-c", "model=3"), L), sameText: true},
		{name: "strict_bool_key_literal", args: w(a("--strict-config", "-c", "hide_agent_reasoning=yes"), L), sameText: true},
		{name: "strict_usize_key_bool", args: w(a("--strict-config", "-c", "project_doc_max_bytes=true"), L), sameText: true},
		{name: "strict_path_key_literal", args: w(a("--strict-config", "-c", "log_dir=/tmp/x"), L)},
		{name: "strict_missing_equals", args: w(a("--strict-config", "-c", "foo"), L), sameText: true},
		{name: "strict_empty_key", args: w(a("--strict-config", "-c", "=3"), L), sameText: true},
		{name: "strict_enable_unknown_first", args: w(a("--strict-config", "-c", "foo=1", "--enable", "nope"), L), sameText: true},
		{name: "file_malformed", args: L, config: "this is = = bad\n"},
		{name: "file_malformed_strict", args: w(a("--strict-config"), L), config: "this is = = bad\n"},
		{name: "file_unknown", args: L, config: "foo = 1\n"},
		{name: "file_unknown_strict", args: w(a("--strict-config"), L), config: "foo = 1\n"},
		{name: "file_unknown_feature_strict", args: w(a("--strict-config"), L), config: "model = \"o3\"\n[features]\nbogus_feature = true\n"},
		{name: "file_feature_not_bool_strict", args: w(a("--strict-config"), L), config: "[features]\nunified_exec = \"yes\"\n"},
		{name: "file_model_int_strict", args: w(a("--strict-config"), L), config: "model = 3\n"},
		{name: "file_bool_key_string_strict", args: w(a("--strict-config"), L), config: "\nhide_agent_reasoning = \"no\"\n"},
		{name: "file_known_strict", args: w(a("--strict-config"), L), config: "model = \"o3\"\n[features]\nunified_exec = true\n[profiles.x]\nmodel = \"y\"\n"},
		// Remote: requirements and conflicts (exit 2), then start-up checks (exit 1).
		{name: "remote_without_env", args: a("--remote", "http://127.0.0.1:1")},
		{name: "env_without_remote", args: w(a("--environment-id", "env-1", "--name", "n"), L)},
		{name: "remote_with_listen", args: w(R, L)},
		{name: "transport_without_remote", args: w(a("--remote-transport", "noise"), L)},
		{name: "transport_bad", args: w(R, a("--remote-transport", "bogus"))},
		{name: "direct_without_sigv4", args: w(R, a("--remote-transport", "direct"))},
		{name: "sigv4_with_noise", args: w(R, a("--aws-sigv4")), sameText: true},
		{name: "sigv4_without_remote", args: a("--aws-sigv4")},
		{name: "aws_profile_without_sigv4", args: w(R, a("--aws-profile", "p"))},
		{name: "aws_region_without_sigv4", args: w(R, a("--aws-region", "r"))},
		{name: "aws_service_without_sigv4", args: w(R, a("--aws-service", "s"))},
		{name: "direct_sigv4", args: w(R, a("--remote-transport", "direct", "--aws-sigv4"))},
		{name: "bearer_without_remote", args: a("--registration-bearer-stdin")},
		{name: "exit_on_close_without_remote", args: a("--exit-on-stdin-close")},
		{name: "exit_on_close_env_without_remote", args: L, env: a("CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE=true")},
		{name: "exit_on_close_env_false", args: L, env: a("CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE=false")},
		{name: "exit_on_close_env_bad", args: L, env: a("CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE=yes")},
		{name: "agent_without_remote", args: a("--use-agent-identity-auth")},
		{name: "account_without_token", args: w(R, a("--chatgpt-account-id", "a"))},
		{name: "bearer_and_credential", args: w(R, a("--registration-bearer-stdin", "--executor-credential-stdin"))},
		{name: "bearer_and_agent", args: w(R, a("--use-agent-identity-auth", "--registration-bearer-stdin"))},
		{name: "chatgpt_and_bearer", args: w(R, a("--chatgpt-token-stdin", "--registration-bearer-stdin"))},
		{name: "chatgpt_and_agent", args: w(R, a("--chatgpt-token-stdin", "--use-agent-identity-auth"))},
		{name: "credential_and_agent", args: w(R, a("--executor-credential-stdin", "--use-agent-identity-auth"))},
		{name: "chatgpt_over_http", args: w(R, a("--chatgpt-token-stdin")), sameText: true},
		{name: "bearer_stdin_empty", args: w(R, a("--registration-bearer-stdin"))},
		{name: "credential_stdin_empty", args: w(R, a("--executor-credential-stdin")), sameText: true},
		{name: "agent_without_token", args: w(R, a("--use-agent-identity-auth")), sameText: true},
		{name: "exit_on_close_stdin_closed", args: w(R, a("--exit-on-stdin-close"))},
		{name: "remote_with_ws_auth", args: w(R, a("--ws-auth", "capability-token", "--ws-token-file", "x")), sameText: true},
		{name: "remote_with_bad_ws_flags", args: w(R, a("--ws-audience", "a")), sameText: true},
		{name: "remote_sigv4_before_ws", args: w(R, a("--aws-sigv4", "--ws-audience", "a")), sameText: true},
		{name: "remote_ws_before_strict", args: w(R, a("--strict-config", "-c", "foo=1", "--ws-audience", "a")), sameText: true},
		{name: "remote_empty_env_id", args: a("--remote", "http://127.0.0.1:1", "--environment-id", "", "--registration-bearer-stdin")},
		{name: "remote_empty_env_id_api_key", args: a("--remote", "http://127.0.0.1:1", "--environment-id", ""), env: a("CODEX_API_KEY=sk-test"), sameText: true},
		{name: "remote_registry_down", args: w(R), env: a("CODEX_API_KEY=sk-test")},
		{name: "remote_api_key_not_https", args: a("--remote", "ftp://x", "--environment-id", "e"), env: a("CODEX_API_KEY=sk-test"), sameText: true},
		// forward.
		{name: "forward_nothing", args: a("forward")},
		{name: "forward_without_connect", args: w(a("forward"), R)},
		{name: "forward_connect_relative", args: w(a("forward"), R, a("--connect", "notaurl")), sameText: true},
		{name: "forward_connect_http", args: w(a("forward"), R, a("--connect", "http://127.0.0.1:1")), sameText: true},
		{name: "forward_connect_bad_after_bearer", args: w(a("forward"), R, a("--connect", "notaurl", "--registration-bearer-stdin"))},
		{name: "forward_connect_bad_with_key", args: w(a("forward"), R, a("--connect", "notaurl")), env: a("CODEX_API_KEY=sk-test"), sameText: true},
		{name: "forward_connect_empty", args: w(a("forward"), R, a("--connect", "")), sameText: true},
		{name: "forward_ws_auth", args: w(a("forward"), R, CN, a("--ws-auth", "capability-token"))},
		{name: "forward_listen", args: w(a("forward"), R, CN, a("--listen", "stdio"))},
		{name: "forward_chatgpt", args: w(a("forward"), R, CN, a("--chatgpt-token-stdin"))},
		{name: "forward_concurrent", args: w(a("forward"), R, CN, a("--concurrent-requests", "2"))},
		{name: "forward_direct", args: w(a("forward"), R, CN, a("--remote-transport", "direct", "--aws-sigv4")), sameText: true},
		{name: "forward_sigv4_noise", args: w(a("forward"), R, CN, a("--aws-sigv4")), sameText: true},
		{name: "forward_enable_unknown", args: w(a("forward"), R, CN, a("--enable", "nope")), sameText: true},
		{name: "forward_strict", args: w(a("forward"), R, a("--connect", "http://x", "--strict-config", "-c", "foo=1")), sameText: true},
		{name: "forward_upstream_bad", args: w(a("forward"), R, CN, a("--tcp-upstream-proxy", "x")), since: "0.171.0"},
		{name: "forward_bearer_empty", args: w(a("forward"), R, CN, a("--registration-bearer-stdin"))},
		{name: "forward_registry_down", args: w(a("forward"), R, CN, a("--registration-bearer-stdin", "--name", "n"))},
		{name: "forward_parent_flags", args: w(a("--listen", "stdio", "forward"), R, CN, a("--registration-bearer-stdin"))},
	}
}

func TestExecServerInterop_CommandLines(t *testing.T) {
	ours := oursBinary(t)
	cases := execServerCases()
	homes := map[string]string{}
	home := func(c execServerCase) string {
		if h, ok := homes[c.name]; ok {
			return h
		}
		h := refbin.CodexHome(t)
		if c.config != "" {
			if err := os.WriteFile(filepath.Join(h, "config.toml"), []byte(c.config), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		homes[c.name] = h
		return h
	}
	got := map[string]execServerOutcome{}
	for _, c := range cases {
		got[c.name] = runExecServerOnce(t, ours, home(c), c.env, c.args)
	}
	refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) {
		for _, c := range cases {
			if c.since != "" && rel.Version < c.since {
				continue // flags this release does not have
			}
			ref := runExecServerOnce(t, rel.Path, home(c), c.env, c.args)
			o := got[c.name]
			same := ref.listening == o.listening && ref.exit == o.exit
			if same && c.sameText && ref.exit == 1 {
				same = ref.errLine == o.errLine
			}
			if !same {
				t.Errorf("%s %q:\n ours      %v\n reference %v", c.name, c.args, o, ref)
			}
		}
	})
}
