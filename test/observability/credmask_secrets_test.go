//go:build linux

package observability_test

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
)

// TestCredentialSecretsNeverLeak runs a real `executor serve` at debug level with JSON
// logs, a metrics listener and OTLP traces, and a CODEX_HOME. A masked bash -c launch
// (GitHub, OpenAI and a custom token, one embedded in a URL variable, one provider
// skipped as invalid) sends its dummy to a loopback server bound to the custom provider
// (which receives the real value) and to another port (dummy); a second launch with a
// bad credentialProviders member fails with a decode error. Afterwards the real values
// must appear in none of: the executor's stderr log at debug level, every JSON-RPC
// response and notification (errors included), the /metrics scrape, the exported spans
// (every attribute and event, as JSON), and the files under CODEX_HOME (which hold no
// private key).
func TestCredentialSecretsNeverLeak(t *testing.T) {
	const (
		gh     = "ghp_Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
		oa     = "sk-proj-Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2H1g0F9e8D7c6B5a4"
		custom = "tok_abcdefgh"
	)
	secrets := []string{gh, oa, custom}
	// Each server hands what it received to the test (the child makes one request to each).
	bound, unbound := make(chan string, 4), make(chan string, 4)
	recorder := func(got chan<- string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case got <- r.Header.Get("Authorization"):
			default:
			}
			_, _ = io.WriteString(w, "ok")
		})
	}
	srv, other := httptest.NewServer(recorder(bound)), httptest.NewServer(recorder(unbound))
	defer srv.Close()
	defer other.Close()

	rcv := newOTLPReceiver(t)
	home := t.TempDir()
	p := startEnv(t, nil, []string{
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + rcv.srv.URL + "/v1/traces",
		"OTEL_SERVICE_NAME=credmask-leak", "CODEX_HOME=" + home,
	}, "serve", "--listen", "ws://127.0.0.1:0", "--log-format", "json", "--log-level", "debug", "--metrics-listen", "127.0.0.1:0")
	line := p.url(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Every notification and result, as JSON; bounded by the run (a few dozen messages).
	wire := make(chan []byte, 1024)
	record := func(v any) {
		if b, err := json.Marshal(v); err == nil {
			select {
			case wire <- b:
			default:
				t.Error("wire record full")
			}
		}
	}
	c, err := harness.DialLocal(ctx, strings.TrimSpace(line), &harness.Options{OnNotification: func(n harness.Notification) { record(n) }})
	if err == nil {
		defer c.Close()
		var init protocol.InitializeResult
		if init, err = c.Initialize(ctx, "credmask-leak", ""); err == nil {
			caps := init.EnvironmentInfo.Capabilities
			if !caps.CredentialMasking || !caps.CredentialMaskingCustomProviders {
				t.Errorf("capabilities %+v, want credentialMasking*", caps)
			}
		}
	}
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	providers := `{"c":{"env":["CT"],"patterns":["tok_[a-z]{8}"],"url_prefixes":["` + srv.URL + `/"],"auth":["bearer"]},` +
		`"bad":{"env":["BAD"],"patterns":["("],"url_prefixes":["https://x.example/"]}}`
	proxy := func(providers string) json.RawMessage {
		return json.RawMessage(`{"proxy":{"enabled":true,"enableSocks5":false,"enableSocks5Udp":false,"allowUpstreamProxy":false,` +
			`"dangerouslyAllowAllUnixSockets":false,"mode":"full","allowLocalBinding":false,"domains":{"127.0.0.1":"allow"},` +
			`"credentialMasking":true,"credentialProviders":` + providers + `}}`)
	}
	cwd, err := protocol.ParsePathURI("file:///")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir() + "/child"
	script := `{ echo "$GITHUB_TOKEN $OPENAI_API_KEY $CT $URLVAR"; curl -sS --max-time 20 -H "Authorization: Bearer $CT" ` + srv.URL +
		`/x; curl -sS --max-time 20 -H "Authorization: Bearer $CT" ` + other.URL + `/y; } >` + out + ` 2>&1`
	env := map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin", "GITHUB_TOKEN": gh, "OPENAI_API_KEY": oa, "CT": custom,
		"URLVAR": "https://x:" + gh + "@github.com/o/r.git", "BAD": "whatever"}
	res, err := c.StartProcess(ctx, protocol.ProcessStartParams{ProcessID: "m", Argv: []string{"bash", "-c", script}, Cwd: cwd, Env: env, NetworkProxy: proxy(providers)})
	if err != nil {
		t.Fatalf("process/start: %v", err)
	}
	record(res)
	waitClosed(ctx, t, c, "m", record)
	_, err = c.StartProcess(ctx, protocol.ProcessStartParams{ProcessID: "bad", Argv: []string{"bash", "-c", "true"}, Cwd: cwd, Env: env,
		NetworkProxy: proxy(`{"c":{"env":["CT"],"patterns":["` + custom + `"],"urlPrefixes":["` + gh + `"]}}`)})
	if err == nil {
		t.Fatal("a bad credentialProviders member started")
	}
	record(err.Error())
	metrics := scrape(t, p.metricsAddr(t))
	c.Close()
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil { // flushes the spans
		t.Fatal(err)
	}
	var spans string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) { // bounded
		all, _ := rcv.snapshot()
		if hasSpan(all, "process") {
			var b strings.Builder
			for _, s := range all {
				j, _ := protojson.Marshal(s)
				b.Write(j)
			}
			spans = b.String()
			break
		}
	}
	if spans == "" {
		t.Fatal("no process span exported")
	}
	child, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got, dummy := first(bound), first(unbound); got != "Bearer "+custom || !strings.HasPrefix(dummy, "Bearer tok_") || dummy == got {
		t.Errorf("servers received %q (bound) and %q (other), want the real value at the bound one only", got, dummy)
	}
	var wireText strings.Builder
	for len(wire) > 0 { // c is closed: nothing is added any more
		wireText.Write(<-wire)
		wireText.WriteByte('\n')
	}
	var files strings.Builder
	homeFS := os.DirFS(home)
	_ = fs.WalkDir(homeFS, ".", func(name string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := fs.ReadFile(homeFS, name)
			files.WriteString(name + "\n")
			files.Write(b)
		}
		return nil
	})
	if strings.Contains(files.String(), "PRIVATE KEY") {
		t.Error("a file under CODEX_HOME holds a private key")
	}
	logs := p.logText()
	if !strings.Contains(logs, "credential headers translated") || !strings.Contains(logs, "ignoring invalid credential provider") {
		t.Errorf("the debug log lacks the translation or the skipped-provider line (did the run exercise masking?):\n%s", logs)
	}
	for _, s := range secrets {
		for name, text := range map[string]string{"child output": string(child), "stderr log (debug)": logs, "wire": wireText.String(),
			"metrics": metrics, "spans": spans, "CODEX_HOME": files.String()} {
			if strings.Contains(text, s) {
				t.Errorf("%s holds the real value %.12s…:\n%s", name, s, text)
			}
		}
	}
}

// first is the first value on ch, or "" when none came (the child ran already).
func first(ch <-chan string) string {
	select {
	case v := <-ch:
		return v
	default:
		return ""
	}
}

// waitClosed reads process id until it is closed, recording each result.
func waitClosed(ctx context.Context, t *testing.T, c *harness.Client, id string, record func(any)) {
	t.Helper()
	after, wait := uint64(0), uint64(2000)
	for range 100 { // bounded: each read waits at most 2 s
		res, err := c.ReadProcess(ctx, protocol.ProcessReadParams{ProcessID: id, AfterSeq: &after, WaitMs: &wait})
		if err != nil {
			t.Fatalf("process/read: %v", err)
		}
		record(res)
		if res.Closed {
			return
		}
		if res.NextSeq > 0 {
			after = res.NextSeq - 1
		}
	}
	t.Fatalf("process %s never closed", id)
}
