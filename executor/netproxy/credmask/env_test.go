package credmask_test

import (
	"bytes"
	"encoding/json"
	"hash/crc32"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/netproxy/credmask"
)

// githubPAT builds a classic PAT with a valid checksum (30 characters of entropy plus
// the base62 CRC32 of them), as the probe of 0.171.0 used.
func githubPAT(entropy string) string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	n := crc32.ChecksumIEEE([]byte(entropy))
	var b [6]byte
	for i := 5; i >= 0; i-- {
		b[i] = alphabet[n%62]
		n /= 62
	}
	return "ghp_" + entropy + string(b[:])
}

var (
	realPAT    = githubPAT("abcdefghijABCDEFGHIJ0123456789")
	realOpenAI = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghijklmnopq"
	realCustom = "tok_abcdefgh"
)

func bashC() []string { return []string{"bash", "-c", "env"} }

func customProviders(t testing.TB, raw string) []credmask.ProviderEntry {
	t.Helper()
	p, err := credmask.DecodeProviders(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestShellStartupMaskable(t *testing.T) {
	tests := []struct {
		argv []string
		want bool
	}{
		{[]string{"bash", "-c", "x"}, true},
		{[]string{"/usr/bin/bash", "-c", "x"}, true},
		{[]string{"sh", "-c", "x"}, false},
		{[]string{"bash", "-lc", "x"}, false},
		{[]string{"bash", "-i", "-c", "x"}, false},
		{[]string{"bash", "--noprofile", "--norc", "-c", "x"}, false},
		{[]string{"bash", "-c", "x", "arg0"}, false},
		{[]string{"/usr/bin/env"}, false},
		{[]string{"/bin/bash", "-c", "x"}, true},
		{[]string{"/var/tmp/x/bash", "-c", "x"}, true},
		{[]string{"/bin/rbash", "-c", "x"}, false},
		{[]string{"/bin/zsh", "-c", "x"}, false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := credmask.ShellStartupMaskable(tt.argv); got != tt.want {
			t.Errorf("ShellStartupMaskable(%q) = %v, want %v", tt.argv, got, tt.want)
		}
	}
}

// TestPrepare_ProbedShape replays the 0.171.0 probe: GITHUB_TOKEN (valid PAT), an alias
// of it, GH_ENTERPRISE_TOKEN without GH_HOST (alias only), OPENAI_API_KEY and a custom
// provider.
func TestPrepare_ProbedShape(t *testing.T) {
	env := map[string]string{
		"PATH": "/usr/bin:/bin", "GITHUB_TOKEN": realPAT, "MY_COPY_TOK": realPAT,
		"GH_ENTERPRISE_TOKEN": realPAT, "OPENAI_API_KEY": realOpenAI, "CUSTOM_TOK": realCustom,
	}
	cfg := &credmask.Config{
		Masking:      true,
		Providers:    customProviders(t, `{"custom":{"env":["CUSTOM_TOK"],"patterns":["tok_[a-z]{8}"],"url_prefixes":["http://127.0.0.1:9/"],"auth":["bearer"]}}`),
		CABundlePath: "/home/x/proxy/ca-bundle-abc.pem",
		Rand:         credmask.RandFromSeed(1),
	}
	p, err := credmask.Prepare(bashC(), env, cfg)
	if err != nil {
		t.Fatal(err)
	}
	gh := p.Env["GITHUB_TOKEN"]
	if !regexp.MustCompile(`^ghp_masked[A-Za-z0-9]{30}$`).MatchString(gh) {
		t.Errorf("GITHUB_TOKEN = %q, want ghp_masked + 30 alphanumerics", gh)
	}
	for _, k := range []string{"MY_COPY_TOK", "GH_ENTERPRISE_TOKEN"} {
		if p.Env[k] != gh {
			t.Errorf("%s = %q, want the alias dummy %q", k, p.Env[k], gh)
		}
	}
	oa := p.Env["OPENAI_API_KEY"]
	if !strings.HasPrefix(oa, "sk-proj-masked") || len(oa) != len(realOpenAI) {
		t.Errorf("OPENAI_API_KEY = %q, want sk-proj-masked… of length %d", oa, len(realOpenAI))
	}
	ct := p.Env["CUSTOM_TOK"]
	if !regexp.MustCompile(`^tok_[a-z]{8}$`).MatchString(ct) || ct == realCustom {
		t.Errorf("CUSTOM_TOK = %q, want a fresh tok_[a-z]{8}", ct)
	}
	if p.Env["PATH"] != "/usr/bin:/bin" {
		t.Errorf("PATH changed: %q", p.Env["PATH"])
	}
	if p.Env[credmask.EnvBrokerActive] != "1" {
		t.Errorf("%s = %q, want 1", credmask.EnvBrokerActive, p.Env[credmask.EnvBrokerActive])
	}
	var pairs [][2]string
	if err := json.Unmarshal([]byte(p.Env[credmask.EnvBrokeredCredentials]), &pairs); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, pr := range pairs {
		names = append(names, pr[0])
		if p.Env[strings.TrimPrefix(pr[0], "@alias:")] != pr[1] {
			t.Errorf("marker pair %q does not hold the variable's dummy", pr)
		}
	}
	want := "@alias:CUSTOM_TOK @alias:GH_ENTERPRISE_TOKEN @alias:GITHUB_TOKEN @alias:MY_COPY_TOK @alias:OPENAI_API_KEY CUSTOM_TOK GITHUB_TOKEN OPENAI_API_KEY"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("marker names = %s\nwant %s", got, want)
	}
	for _, k := range credmask.CAEnvVars {
		if p.Env[k] != cfg.CABundlePath {
			t.Errorf("%s = %q, want the bundle path", k, p.Env[k])
		}
	}
	if len(credmask.CAEnvVars) != 13 {
		t.Errorf("%d CA variables, want 13", len(credmask.CAEnvVars))
	}
	if env["GITHUB_TOKEN"] != realPAT {
		t.Error("Prepare modified its input")
	}
	if p.Broker.Len() != 3 {
		t.Errorf("broker holds %d credentials, want 3", p.Broker.Len())
	}
}

func TestPrepare_AnyGitHubValueAndEnterpriseHost(t *testing.T) {
	env := map[string]string{"GITHUB_TOKEN": "x", "GH_HOST": "ghe.corp.example:443", "GH_ENTERPRISE_TOKEN": "enterprise-secret-1"}
	p, err := credmask.Prepare(bashC(), env, &credmask.Config{Masking: true, Rand: credmask.RandFromSeed(2)})
	if err != nil {
		t.Fatal(err)
	}
	if g := p.Env["GITHUB_TOKEN"]; len(g) != 40 || !strings.HasPrefix(g, "ghp_masked") {
		t.Errorf("GITHUB_TOKEN=x became %q, want a 40-byte ghp_masked dummy (0.171.0)", g)
	}
	if e := p.Env["GH_ENTERPRISE_TOKEN"]; e == "enterprise-secret-1" || !strings.HasPrefix(e, "ghp_masked") {
		t.Errorf("GH_ENTERPRISE_TOKEN = %q, want masked (GH_HOST is an enterprise host)", e)
	}
	if !p.Broker.Intercepts("ghe.corp.example", 443) || !p.Broker.Intercepts("API.GitHub.com", 443) || !p.Broker.Intercepts("x.ghe.com", 443) {
		t.Error("broker does not intercept the GitHub destinations")
	}
	if p.Broker.Intercepts("example.com", 443) || p.Broker.Intercepts("ghe.com", 443) {
		t.Error("broker intercepts a destination no credential is bound to")
	}
	// Built-in bindings are host bindings: any port (probed: GH_HOST=127.0.0.1
	// intercepts https://127.0.0.1:<fixture port>), https only.
	if !p.Broker.Intercepts("github.com", 8443) || !p.Broker.Intercepts("ghe.corp.example", 1) || p.Broker.HandlesPlainHTTP("github.com", 80) {
		t.Error("built-in bindings: want https on any port, never plain http")
	}
	p, err = credmask.Prepare(bashC(), map[string]string{"GH_HOST": "https://GHE.Corp.example/", "GITHUB_ENTERPRISE_TOKEN": "e-secret-2"}, &credmask.Config{Masking: true})
	if err != nil || !p.Broker.Intercepts("ghe.corp.example", 443) {
		t.Errorf("GH_HOST as a URL: broker %v, err %v; want ghe.corp.example bound", p.Broker, err)
	}
	// GH_HOST naming a cloud host does not activate the enterprise source.
	p, err = credmask.Prepare(bashC(), map[string]string{"GH_HOST": "github.com", "GH_ENTERPRISE_TOKEN": "e-secret"}, &credmask.Config{Masking: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Env["GH_ENTERPRISE_TOKEN"] != "e-secret" || p.Broker != nil || p.Env[credmask.EnvBrokeredCredentials] != "[]" {
		t.Errorf("cloud GH_HOST: env %v, broker %v; want the enterprise token real and an empty marker", p.Env, p.Broker)
	}
}

func TestPrepare_OtherStartupsStayReal(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	env := map[string]string{"GITHUB_TOKEN": realPAT}
	for _, argv := range [][]string{{"sh", "-c", "env"}, {"bash", "-lc", "env"}, {"/usr/bin/env"}} {
		logs.Reset()
		p, err := credmask.Prepare(argv, env, &credmask.Config{Masking: true, CABundlePath: "/b.pem", Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		if p.Env["GITHUB_TOKEN"] != realPAT || p.Broker != nil {
			t.Errorf("%q: token masked", argv)
		}
		if _, ok := p.Env[credmask.EnvBrokerActive]; ok {
			t.Errorf("%q: broker marker set", argv)
		}
		if p.Env["SSL_CERT_FILE"] != "/b.pem" {
			t.Errorf("%q: CA variables missing with masking on", argv)
		}
		if n := strings.Count(logs.String(), credmask.UnavailableLogText); n != 1 {
			t.Errorf("%q: unavailable line logged %d times, want 1: %s", argv, n, logs.String())
		}
	}
	p, err := credmask.Prepare(bashC(), env, &credmask.Config{Masking: false, CABundlePath: "/b.pem"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Env["GITHUB_TOKEN"] != realPAT || p.Env["SSL_CERT_FILE"] != "" || len(p.Env) != 1 {
		t.Errorf("masking off changed env: %v", p.Env)
	}
}

// TestCompileProviders_SkipsWithReferenceLog pins the warnings observed on 0.171.0.
func TestCompileProviders_SkipsWithReferenceLog(t *testing.T) {
	ok := `"env":["CUSTOM_TOK"],"patterns":["tok_[a-z]{8}"],"url_prefixes":["https://x.example/"],"auth":["bearer"]`
	tests := []struct{ name, raw, want string }{
		{"bad regex", `{"c":{"env":["CUSTOM_TOK"],"patterns":["("],"url_prefixes":["https://x.example/"]}}`, "invalid credential pattern for provider `c`"},
		{"dot star", `{"c":{"env":["CUSTOM_TOK"],"patterns":[".*"],"url_prefixes":["https://x.example/"]}}`, "invalid credential pattern for provider `c`"},
		{"empty id", `{"":{` + ok + `}}`, "credential provider name must not be empty"},
		{"ftp", `{"c":{"env":["CUSTOM_TOK"],"patterns":["tok_[a-z]{8}"],"url_prefixes":["ftp://x.example/"]}}`, "invalid destination for credential provider `c`"},
		{"http non-loopback", `{"c":{"env":["CUSTOM_TOK"],"patterns":["tok_[a-z]{8}"],"url_prefixes":["http://x.example/"]}}`, "invalid destination for credential provider `c`"},
		{"builtin overlap", `{"c":{"env":["GITHUB_TOKEN"],"patterns":["x"],"url_prefixes":["https://x.example/"]}}`, "credential provider `c` overlaps a built-in credential source"},
		{"no env", `{"x":{"auth":[{"bearer":null}]}}`, "credential provider `x` has no environment keys"},
		{"no patterns", `{"c":{"env":["CUSTOM_TOK"],"url_prefixes":["https://x.example/"]}}`, "credential provider `c` has no credential patterns"},
		{"header without name", `{"c":{"env":["CUSTOM_TOK"],"patterns":["tok_[a-z]{8}"],"url_prefixes":["https://x.example/"],"auth":["header"]}}`, "credential provider `c` requires a header name exactly when using header authentication"},
		{"no destination", `{"c":{"env":["CUSTOM_TOK"],"patterns":["tok_[a-z]{8}"]}}`, "credential provider `c` has no destination URL prefixes"},
		{"from-env unset", `{"c":{"env":["CUSTOM_TOK"],"patterns":["tok_[a-z]{8}"],"url_prefix_from_env":"NOPE"}}`, "Credential masking could not protect some environment credentials; continuing with those values unmasked."},
		{"overlapping env", `{"c":{` + ok + `},"d":{` + ok + `}}`, `ignoring credential provider with an overlapping environment source" provider=d`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			env := map[string]string{"CUSTOM_TOK": realCustom, "GITHUB_TOKEN": "x"}
			p, err := credmask.Prepare(bashC(), env, &credmask.Config{Masking: true, Providers: customProviders(t, tt.raw), Logger: log})
			if err != nil {
				t.Fatalf("Prepare failed: %v (a bad provider must not fail the start)", err)
			}
			if !strings.Contains(logs.String(), tt.want) {
				t.Errorf("log %q does not contain %q", logs.String(), tt.want)
			}
			if tt.name != "overlapping env" && p.Env["CUSTOM_TOK"] != realCustom {
				t.Errorf("CUSTOM_TOK = %q, want it real (provider skipped)", p.Env["CUSTOM_TOK"])
			}
		})
	}
}

func TestPrepare_URLPrefixFromEnv(t *testing.T) {
	env := map[string]string{"CUSTOM_TOK": realCustom, "API_BASE": "https://api.corp.example/v2"}
	p, err := credmask.Prepare(bashC(), env, &credmask.Config{Masking: true, Rand: credmask.RandFromSeed(5),
		Providers: customProviders(t, `{"c":{"env":["CUSTOM_TOK"],"patterns":["tok_[a-z]{8}"],"url_prefix_from_env":"API_BASE","auth":["token"]}}`)})
	if err != nil {
		t.Fatal(err)
	}
	d := p.Env["CUSTOM_TOK"]
	if d == realCustom || !p.Broker.Intercepts("api.corp.example", 443) {
		t.Fatalf("CUSTOM_TOK %q, intercepts %v; want masked and bound to API_BASE", d, p.Broker.Intercepts("api.corp.example", 443))
	}
	for path, want := range map[string]string{"/v2/repos": "token " + realCustom, "/v3": "token " + d} {
		lines := []credmask.HeaderLine{{Name: "authorization", Value: "token " + d}}
		lines, _ = p.Broker.RewriteLines(credmask.Request{Scheme: "https", Host: "api.corp.example", Path: path}, lines)
		if lines[0].Value != want {
			t.Errorf("path %s: %q, want %q", path, lines[0].Value, want)
		}
	}
}

// TestPrepare_AliasesAreExact follows 0.171.0: GITHUB_TOKEN=" v " is brokered as "v";
// COPY="v" is an alias; COPY2=" v " and EMBED (the value inside a URL) stay real and
// the unprotected-credential warning is logged.
func TestPrepare_AliasesAreExact(t *testing.T) {
	var logs bytes.Buffer
	env := map[string]string{"GITHUB_TOKEN": " padded-value ", "COPY": "padded-value", "COPY2": " padded-value ",
		"EMBED": "url=https://x:padded-value@h", "OPENAI_API_KEY": "sk-abc"}
	p, err := credmask.Prepare(bashC(), env, &credmask.Config{Masking: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if p.Env["COPY"] != p.Env["GITHUB_TOKEN"] || !strings.HasPrefix(p.Env["COPY"], "ghp_masked") {
		t.Errorf("COPY = %q, want the GITHUB_TOKEN dummy %q", p.Env["COPY"], p.Env["GITHUB_TOKEN"])
	}
	if p.Env["COPY2"] != " padded-value " || p.Env["EMBED"] != env["EMBED"] {
		t.Errorf("COPY2 %q, EMBED %q: want them unchanged", p.Env["COPY2"], p.Env["EMBED"])
	}
	if n := strings.Count(logs.String(), "Credential masking could not protect some environment credentials"); n != 1 {
		t.Errorf("unprotected warning logged %d times, want 1: %s", n, logs.String())
	}
	if o := p.Env["OPENAI_API_KEY"]; len(o) != 51 || !strings.HasPrefix(o, "sk-masked") {
		t.Errorf("OPENAI_API_KEY=sk-abc became %q, want sk-masked… of 51 bytes (0.171.0)", o)
	}
}
