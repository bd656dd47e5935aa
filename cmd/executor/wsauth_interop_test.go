package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
)

// Differential tests of the local listener's --ws-auth against every released reference
// (`codex exec-server`, found by internal/refbin; fails under CI=true when missing): the
// same start-up errors and exit statuses for each flag combination, and the same HTTP
// answers (status, content type, body) for a table of upgrade requests with missing,
// malformed, wrong and valid capability tokens and JWTs, with /readyz open. Ours runs
// once per test; every release is compared with it in a subtest named by its version.

// wsAuthFixture is a directory of token and secret files shared by both binaries (the
// error texts carry their absolute paths, so both runs use the same directory as cwd).
type wsAuthFixture struct {
	dir, tokenSHA string
}

const (
	wsTestToken  = "capability-token-for-tests"
	wsTestSecret = "0123456789abcdef0123456789abcdef-wsauth"
)

func newWSAuthFixture(t *testing.T) *wsAuthFixture {
	t.Helper()
	dir := filepath.Join(refbin.CodexHome(t), "auth")
	files := map[string]string{
		"token":     "  " + wsTestToken + "\n",
		"secret":    wsTestSecret + "\n",
		"short":     "too-short\n",
		"empty":     " \n\t\n",
		"badutf8":   "\xff\xfe\n",
		"dir/plain": "x",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sum := sha256.Sum256([]byte(wsTestToken))
	return &wsAuthFixture{dir: dir, tokenSHA: hex.EncodeToString(sum[:])}
}

// startResult is how a listener start ended: a URL (still running, killed at cleanup) or
// an exit status with its first stderr line.
type startResult struct {
	URL      string
	Exit     int
	ErrLine  string // first line of stderr ("Error: …"), compared only for exit 1
	Stderr   string
	TimedOut bool
	stop     func() // stops the process (listening: runs until then)
}

func (r startResult) String() string {
	if r.URL != "" {
		return "listening"
	}
	return fmt.Sprintf("exit %d %q", r.Exit, r.ErrLine)
}

// startListener runs ours (`executor <args>`) or a reference (`codex exec-server <args>`)
// with dir as cwd and waits for the ws:// line or the exit.
func startListener(t *testing.T, bin string, ref bool, dir string, args ...string) startResult {
	t.Helper()
	if ref {
		args = append([]string{"exec-server"}, args...)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CODEX_HOME="+refbin.CodexHome(t), "RUST_BACKTRACE=0", "RUST_LOG=off", "HOME="+dir)
	res := listenOrExit(t, cmd)
	if res.URL != "" {
		t.Cleanup(res.stop)
	}
	return res
}

// listenOrExit starts cmd and waits (at most 30 s) for its ws:// line or its exit: URL is
// set when it listens (the caller stops it: stop, or at cleanup), Exit, ErrLine and
// Stderr when it exited first, TimedOut (the process killed) when neither came.
func listenOrExit(t *testing.T, cmd *exec.Cmd) startResult {
	t.Helper()
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	p, err := refbin.StartProc(cmd, &refbin.LaunchOptions{Line: wsURLLine, LineTimeout: 30 * time.Second, Kill: true})
	if err != nil {
		t.Fatal(err)
	}
	stop := func() { _ = p.Stop() }
	if _, err := p.AwaitLine(); err == nil {
		return startResult{URL: p.URL(), stop: stop}
	}
	select {
	case <-p.Done():
	default:
		stop()
		return startResult{TimedOut: true, Stderr: stderr.String(), stop: stop}
	}
	stop() // reaps the stdout reader
	first, _, _ := strings.Cut(stderr.String(), "\n")
	return startResult{Exit: p.Cmd.ProcessState.ExitCode(), ErrLine: first, Stderr: stderr.String(), stop: stop}
}

// wsURLLine is the line a listening exec-server prints.
var wsURLLine = regexp.MustCompile(`^ws://\S+$`)

func TestWSAuthInterop_StartupErrors(t *testing.T) {
	ours := oursBinary(t)
	fx := newWSAuthFixture(t)
	cap := []string{"--ws-auth", "capability-token"}
	sbt := []string{"--ws-auth", "signed-bearer-token"}
	with := func(base []string, more ...string) []string { return append(append([]string{}, base...), more...) }
	tests := []struct {
		name string
		args []string
	}{
		{"capability_no_source", cap},
		{"token_file_missing_relative", with(cap, "--ws-token-file", "missing/../nope")},
		{"token_file_and_sha", with(cap, "--ws-token-file", "token", "--ws-token-sha256", fx.tokenSHA)},
		{"sha_too_short", with(cap, "--ws-token-sha256", "abc")},
		{"sha_not_hex", with(cap, "--ws-token-sha256", strings.Repeat("zz", 32))},
		{"sha_empty", with(cap, "--ws-token-sha256", "")},
		{"token_file_empty", with(cap, "--ws-token-file", "empty")},
		{"token_file_directory", with(cap, "--ws-token-file", "dir")},
		{"token_file_not_utf8", with(cap, "--ws-token-file", "badutf8")},
		{"token_file_under_file", with(cap, "--ws-token-file", "token/x")},
		{"token_file_tilde", with(cap, "--ws-token-file", "~/nope")},
		{"capability_with_issuer", with(cap, "--ws-token-file", "token", "--ws-issuer", "x")},
		{"capability_with_skew", with(cap, "--ws-token-sha256", fx.tokenSHA, "--ws-max-clock-skew-seconds", "5")},
		{"flags_without_mode", []string{"--ws-token-file", "token"}},
		{"issuer_without_mode", []string{"--ws-issuer", ""}},
		{"signed_no_secret", sbt},
		{"signed_with_token_file", with(sbt, "--ws-token-file", "token")},
		{"signed_with_sha", with(sbt, "--ws-token-sha256", "")},
		{"signed_short_secret", with(sbt, "--ws-shared-secret-file", "short")},
		{"signed_missing_secret", with(sbt, "--ws-shared-secret-file", "/nonexistent/secret")},
		{"signed_skew_overflow", with(sbt, "--ws-shared-secret-file", "secret", "--ws-max-clock-skew-seconds", "18446744073709551615")},
		{"stdio_with_auth", with(cap, "--listen", "stdio", "--ws-token-file", "nope")},
		{"stdio_uri_with_auth", with(cap, "--listen", "stdio://", "--ws-token-sha256", fx.tokenSHA)},
		{"stdio_with_bad_flags", []string{"--listen", "stdio", "--ws-audience", "a"}},
		{"bad_listen_then_settings", with(cap, "--listen", "ws://localhost:1")},
		{"bad_listen_then_file", with(cap, "--listen", "ws://localhost:1", "--ws-token-file", "nope")},
		{"ok_token_file", with(cap, "--ws-token-file", "token")},
		{"ok_sha_upper_spaces", with(cap, "--ws-token-sha256", " "+strings.ToUpper(fx.tokenSHA)+" ")},
		{"ok_signed", with(sbt, "--ws-shared-secret-file", "secret", "--ws-issuer", " ", "--ws-audience", "aud")},
		// clap usage errors exit 2 (texts are each CLI's own).
		{"usage_bad_mode", []string{"--ws-auth", "bogus"}},
		{"usage_skew_not_number", with(sbt, "--ws-shared-secret-file", "secret", "--ws-max-clock-skew-seconds", "abc")},
		{"usage_empty_path", with(cap, "--ws-token-file", "")},
	}
	oursRes := map[string]startResult{}
	for _, tt := range tests {
		oursRes[tt.name] = startListener(t, ours, false, fx.dir, append([]string{"serve"}, tt.args...)...)
	}
	refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) {
		for _, tt := range tests {
			ref := startListener(t, rel.Path, true, fx.dir, tt.args...)
			got := oursRes[tt.name]
			if ref.TimedOut || got.TimedOut {
				t.Errorf("%s: timed out (ours %v, reference %v)", tt.name, got.TimedOut, ref.TimedOut)
				continue
			}
			same := (ref.URL != "") == (got.URL != "") && ref.Exit == got.Exit
			if same && ref.Exit == 1 {
				same = ref.ErrLine == got.ErrLine
			}
			if !same {
				t.Errorf("%s %q:\n ours      %v\n reference %v", tt.name, tt.args, got, ref)
			}
		}
	})
}

// TestWSAuthInterop_RemoteRefused: --ws-* flags in remote mode are refused (exit 1) with
// the reference's text, after the flag combination itself is checked.
func TestWSAuthInterop_RemoteRefused(t *testing.T) {
	ours := oursBinary(t)
	fx := newWSAuthFixture(t)
	tests := []struct {
		name string
		ws   []string
	}{
		{"with_auth", []string{"--ws-auth", "capability-token", "--ws-token-file", "nope"}},
		{"combination_first", []string{"--ws-auth", "capability-token"}},
		{"flags_without_mode", []string{"--ws-audience", "a"}},
	}
	oursRes := map[string]startResult{}
	for _, tt := range tests {
		args := append([]string{"remote", "--registry", "http://127.0.0.1:1", "--environment-id", "env-1"}, tt.ws...)
		oursRes[tt.name] = startListener(t, ours, false, fx.dir, args...)
	}
	refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) {
		for _, tt := range tests {
			args := append([]string{"--remote", "http://127.0.0.1:1", "--environment-id", "env-1"}, tt.ws...)
			ref := startListener(t, rel.Path, true, fx.dir, args...)
			got := oursRes[tt.name]
			if ref.Exit != 1 || got.Exit != 1 || ref.ErrLine != got.ErrLine {
				t.Errorf("%s:\n ours      %v\n reference %v", tt.name, got, ref)
			}
		}
	})
	if got := oursRes["with_auth"].ErrLine; got != "Error: WebSocket listener auth cannot be used with --remote or forward" {
		t.Errorf("ours: %q", got)
	}
}

// httpAnswer is what a listener answered to one request.
type httpAnswer struct {
	Status      int
	ContentType string
	Body        string
}

func (a httpAnswer) String() string {
	return fmt.Sprintf("%d %q %q", a.Status, a.ContentType, a.Body)
}

// wsRequest is one request of the HTTP table.
type wsRequest struct {
	name    string
	path    string
	method  string
	upgrade bool
	headers []string // "Name: value", in order (repeated names allowed)
}

func ask(t *testing.T, base string, rq wsRequest) httpAnswer {
	t.Helper()
	method := rq.method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequest(method, base+rq.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rq.upgrade {
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	}
	for _, h := range rq.headers {
		k, v, _ := strings.Cut(h, ": ")
		req.Header.Add(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := tr.RoundTrip(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("%s: %v", rq.name, err)
	}
	defer resp.Body.Close()
	a := httpAnswer{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type")}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		b, _ := io.ReadAll(resp.Body)
		a.Body = string(b)
	}
	return a
}

// hs256 signs a JWT from raw header and claims JSON with key.
func hs256(header, claims string, key []byte) string {
	enc := base64.RawURLEncoding
	msg := enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString([]byte(claims))
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return msg + "." + enc.EncodeToString(m.Sum(nil))
}

func bearerH(tok string) []string { return []string{"Authorization: Bearer " + tok} }

func capabilityRequests() []wsRequest {
	return []wsRequest{
		{name: "readyz", path: "/readyz"},
		{name: "readyz_wrong_token", path: "/readyz", headers: bearerH("wrong")},
		{name: "readyz_origin", path: "/readyz", headers: []string{"Origin: http://x"}},
		{name: "not_found", path: "/x", upgrade: true},
		{name: "no_upgrade_headers", path: "/"},
		{name: "post_upgrade", path: "/", method: http.MethodPost, upgrade: true},
		{name: "upgrade_origin_good_token", path: "/", upgrade: true, headers: append(bearerH(wsTestToken), "Origin: http://x")},
		{name: "missing", path: "/", upgrade: true},
		{name: "wrong", path: "/", upgrade: true, headers: bearerH("wrong")},
		{name: "good", path: "/", upgrade: true, headers: bearerH(wsTestToken)},
		{name: "good_lower_scheme_spaces", path: "/", upgrade: true, headers: []string{"Authorization: bearer    " + wsTestToken + "  "}},
		{name: "basic", path: "/", upgrade: true, headers: []string{"Authorization: Basic " + wsTestToken}},
		{name: "scheme_only", path: "/", upgrade: true, headers: []string{"Authorization: Bearer"}},
		{name: "tab", path: "/", upgrade: true, headers: []string{"Authorization: Bearer\t" + wsTestToken}},
		{name: "non_ascii", path: "/", upgrade: true, headers: []string{"Authorization: Bearer t\u00e9"}},
		{name: "first_header_wrong", path: "/", upgrade: true, headers: append(bearerH("wrong"), bearerH(wsTestToken)...)},
		{name: "first_header_good", path: "/", upgrade: true, headers: append(bearerH(wsTestToken), bearerH("wrong")...)},
		{name: "query_token", path: "/?token=" + wsTestToken, upgrade: true},
		{name: "second_version_header", path: "/", upgrade: true, headers: []string{"Sec-WebSocket-Version: 12"}},
		{name: "bad_version_before_auth", path: "/", method: http.MethodGet, headers: []string{"Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 12", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="}},
		{name: "missing_key_before_auth", path: "/", headers: []string{"Connection: Upgrade", "Upgrade: websocket", "Sec-WebSocket-Version: 13"}},
	}
}

func jwtRequests(now time.Time) []wsRequest {
	key := []byte(wsTestSecret)
	hdr := `{"alg":"HS256","typ":"JWT"}`
	claims := func(extra string) string {
		return fmt.Sprintf(`{"exp":%d,"iss":"iss-1","aud":"aud-1"%s}`, now.Unix()+600, extra)
	}
	enc := base64.RawURLEncoding
	valid := hs256(hdr, claims(""), key)
	parts := strings.Split(valid, ".")
	up := func(name, tok string) wsRequest {
		return wsRequest{name: name, path: "/", upgrade: true, headers: bearerH(tok)}
	}
	return []wsRequest{
		{name: "readyz", path: "/readyz"},
		{name: "missing", path: "/", upgrade: true},
		up("valid", valid),
		up("aud_array", hs256(hdr, fmt.Sprintf(`{"exp":%d,"iss":"iss-1","aud":["x","aud-1"]}`, now.Unix()+600), key)),
		up("aud_empty_array", hs256(hdr, fmt.Sprintf(`{"exp":%d,"iss":"iss-1","aud":[]}`, now.Unix()+600), key)),
		up("expired", hs256(hdr, fmt.Sprintf(`{"exp":%d,"iss":"iss-1","aud":"aud-1"}`, now.Unix()-600), key)),
		up("expired_within_skew", hs256(hdr, fmt.Sprintf(`{"exp":%d,"iss":"iss-1","aud":"aud-1"}`, now.Unix()-20), key)),
		up("nbf_future", hs256(hdr, claims(fmt.Sprintf(`,"nbf":%d`, now.Unix()+600)), key)),
		up("nbf_within_skew", hs256(hdr, claims(fmt.Sprintf(`,"nbf":%d`, now.Unix()+20)), key)),
		up("nbf_null", hs256(hdr, claims(`,"nbf":null`), key)),
		up("wrong_issuer", hs256(hdr, fmt.Sprintf(`{"exp":%d,"iss":"other","aud":"aud-1"}`, now.Unix()+600), key)),
		up("missing_issuer", hs256(hdr, fmt.Sprintf(`{"exp":%d,"aud":"aud-1"}`, now.Unix()+600), key)),
		up("wrong_audience", hs256(hdr, fmt.Sprintf(`{"exp":%d,"iss":"iss-1","aud":"other"}`, now.Unix()+600), key)),
		up("expired_and_wrong_issuer", hs256(hdr, fmt.Sprintf(`{"exp":%d,"iss":"other"}`, now.Unix()-600), key)),
		up("missing_exp", hs256(hdr, `{"iss":"iss-1","aud":"aud-1"}`, key)),
		up("exp_null", hs256(hdr, `{"exp":null,"iss":"iss-1","aud":"aud-1"}`, key)),
		up("exp_float", hs256(hdr, fmt.Sprintf(`{"exp":%d.0,"iss":"iss-1","aud":"aud-1"}`, now.Unix()+600), key)),
		up("exp_string", hs256(hdr, fmt.Sprintf(`{"exp":"%d","iss":"iss-1","aud":"aud-1"}`, now.Unix()+600), key)),
		up("exp_max_i64", hs256(hdr, `{"exp":9223372036854775807,"iss":"iss-1","aud":"aud-1"}`, key)),
		up("exp_over_i64", hs256(hdr, `{"exp":9223372036854775808,"iss":"iss-1","aud":"aud-1"}`, key)),
		up("duplicate_exp", hs256(hdr, fmt.Sprintf(`{"exp":%d,"exp":%d,"iss":"iss-1","aud":"aud-1"}`, now.Unix()+600, now.Unix()+600), key)),
		up("duplicate_unknown", hs256(hdr, claims(`,"x":1,"x":2`), key)),
		up("iss_number", hs256(hdr, fmt.Sprintf(`{"exp":%d,"iss":1,"aud":"aud-1"}`, now.Unix()+600), key)),
		up("aud_number_elem", hs256(hdr, fmt.Sprintf(`{"exp":%d,"iss":"iss-1","aud":["aud-1",1]}`, now.Unix()+600), key)),
		up("claims_array", hs256(hdr, `[1]`, key)),
		up("alg_none", enc.EncodeToString([]byte(`{"alg":"none"}`))+"."+parts[1]+"."),
		up("alg_hs384", hs256(`{"alg":"HS384"}`, claims(""), key)),
		up("alg_lower", hs256(`{"alg":"hs256"}`, claims(""), key)),
		up("header_extra_members", hs256(`{"alg":"HS256","typ":"JWT","kid":"k1","foo":[1,{"a":2}]}`, claims(""), key)),
		up("header_typ_number", hs256(`{"alg":"HS256","typ":1}`, claims(""), key)),
		up("header_not_json", hs256(`not json`, claims(""), key)),
		up("header_trailing_data", hs256(hdr+"A", claims(""), key)),
		up("header_trailing_space", hs256(hdr+" \n", claims(""), key)),
		up("claims_trailing_data", hs256(hdr, claims("")+"x", key)),
		up("claims_trailing_space", hs256(hdr, claims("")+"\t\r\n ", key)),
		up("claims_bom", hs256(hdr, "\ufeff"+claims(""), key)),
		up("claims_invalid_utf8", hs256(hdr, fmt.Sprintf(`{"exp":%d,"iss":"iss-1","aud":"aud-1","x":"\xff"}`, now.Unix()+600), key)),
		up("iss_escaped", hs256(hdr, fmt.Sprintf(`{"exp":%d,"iss":"iss\u002d1","aud":"aud-1"}`, now.Unix()+600), key)),
		up("iss_lone_surrogate", hs256(hdr, fmt.Sprintf(`{"exp":%d,"iss":"iss-1","aud":"aud-1","sub":"\ud800"}`, now.Unix()+600), key)),
		up("exp_negative_zero", hs256(hdr, `{"exp":-0,"iss":"iss-1","aud":"aud-1"}`, key)),
		up("exp_exponent", hs256(hdr, `{"exp":1e18,"iss":"iss-1","aud":"aud-1"}`, key)),
		up("x5c_strings", hs256(`{"alg":"HS256","x5c":["a"]}`, claims(""), key)),
		up("x5c_null_elem", hs256(`{"alg":"HS256","x5c":[null]}`, claims(""), key)),
		up("duplicate_alg", hs256(`{"alg":"HS256","alg":"HS256"}`, claims(""), key)),
		up("duplicate_sub", hs256(hdr, claims(`,"sub":"a","sub":"b"`), key)),
		up("aud_null_elem", hs256(hdr, fmt.Sprintf(`{"exp":%d,"iss":"iss-1","aud":["aud-1",null]}`, now.Unix()+600), key)),
		up("wrong_key", hs256(hdr, claims(""), []byte(strings.Repeat("k", 40)))),
		up("tampered_claims", parts[0]+"."+enc.EncodeToString([]byte(claims(`,"x":1`)))+"."+parts[2]),
		up("signature_padded", valid+"="),
		up("signature_std_alphabet", parts[0]+"."+parts[1]+"."+strings.NewReplacer("-", "+", "_", "/").Replace(parts[2])),
		up("two_parts", parts[0]+"."+parts[1]),
		up("four_parts", valid+".x"),
		up("not_a_jwt", "hello"),
		{name: "valid_lower_scheme", path: "/", upgrade: true, headers: []string{"Authorization: bearer  " + valid + " "}},
	}
}

func TestWSAuthInterop_HTTP(t *testing.T) {
	ours := oursBinary(t)
	fx := newWSAuthFixture(t)
	configs := []struct {
		name string
		args []string
		reqs func() []wsRequest
	}{
		{"capability_file", []string{"--ws-auth", "capability-token", "--ws-token-file", "token"}, capabilityRequests},
		{"capability_sha", []string{"--ws-auth", "capability-token", "--ws-token-sha256", fx.tokenSHA}, capabilityRequests},
		{"signed", []string{"--ws-auth", "signed-bearer-token", "--ws-shared-secret-file", "secret",
			"--ws-issuer", "iss-1", "--ws-audience", "aud-1", "--ws-max-clock-skew-seconds", "60"},
			func() []wsRequest { return jwtRequests(time.Now()) }},
		{"none", nil, func() []wsRequest {
			return []wsRequest{{name: "readyz", path: "/readyz"}, {name: "anyone", path: "/", upgrade: true}}
		}},
	}
	oursURL := map[string]string{}
	for _, c := range configs {
		r := startListener(t, ours, false, fx.dir, append([]string{"serve"}, c.args...)...)
		if r.URL == "" {
			t.Fatalf("ours %s: %v %s", c.name, r, r.Stderr)
		}
		oursURL[c.name] = "http" + strings.TrimPrefix(r.URL, "ws")
	}
	refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) {
		for _, c := range configs {
			r := startListener(t, rel.Path, true, fx.dir, c.args...)
			if r.URL == "" {
				t.Fatalf("reference %s: %v %s", c.name, r, r.Stderr)
			}
			refBase := "http" + strings.TrimPrefix(r.URL, "ws")
			for _, rq := range c.reqs() {
				want := ask(t, refBase, rq)
				got := ask(t, oursURL[c.name], rq)
				if got != want {
					t.Errorf("%s/%s:\n ours      %v\n reference %v", c.name, rq.name, got, want)
				}
			}
		}
	})
}

// TestWSAuthInterop_ReleasedClientSendsBearer pins the client side: the released codex
// CLI sends environments.toml's auth_bearer_token as `authorization: Bearer <token>` on
// the upgrade of its environment's URL (there is no environment variable for it), which
// is what harness.Options.AuthBearerToken and `executor exec --auth-bearer-token-file`
// send.
func TestWSAuthInterop_ReleasedClientSendsBearer(t *testing.T) {
	refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) {
		probe := startBearerProbe(t)
		home := refbin.CodexHome(t)
		toml := fmt.Sprintf("default = \"dev\"\n[[environments]]\nid = \"dev\"\nurl = %q\nauth_bearer_token = %q\n", probe.url, wsTestToken)
		if err := os.WriteFile(filepath.Join(home, "environments.toml"), []byte(toml), 0o600); err != nil {
			t.Fatal(err)
		}
		// The CLI dials its environment at start-up, before any model request; no model is
		// reachable, so it is killed once the upgrade was seen.
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, rel.Path, "exec", "--skip-git-repo-check", "hi")
		cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "RUST_BACKTRACE=0", "OPENAI_BASE_URL=http://127.0.0.1:1/v1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
		select {
		case auth := <-probe.auths:
			if auth != "Bearer "+wsTestToken {
				t.Fatalf("released CLI sent authorization %q, want %q", auth, "Bearer "+wsTestToken)
			}
		case <-ctx.Done():
			t.Fatal("released CLI never dialled its environment")
		}
	})
}

// bearerProbe is a loopback HTTP server that records the Authorization header of each
// request and answers 401.
type bearerProbe struct {
	url   string
	auths chan string
}

func startBearerProbe(t *testing.T) *bearerProbe {
	t.Helper()
	p := &bearerProbe{auths: make(chan string, 16)}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case p.auths <- r.Header.Get("Authorization"):
		default:
		}
		w.WriteHeader(http.StatusUnauthorized)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }() // stopped at cleanup
	t.Cleanup(func() { _ = srv.Close(); <-done })
	p.url = "ws://" + ln.Addr().String()
	return p
}
