//go:build linux

package observability_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
	"github.com/execlab/executor/internal/refbin"
)

func TestMain(m *testing.M) { refbin.Main(m) } // removes what refbin.Executor built

// proc is a running executor subcommand with JSON logs on stderr.
type proc struct {
	*refbin.Proc
	logs *logWatch
}

// startEnv runs the binary with args and extra environment variables ("NAME=value"),
// stdin fed by the given reader, and stops it at cleanup (SIGTERM, SIGKILL after 10 s).
// AwaitLine waits for its URL line, if it prints one.
func startEnv(t *testing.T, stdin io.Reader, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(refbin.Executor(t), args...)
	cmd.Env = append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir()}, env...)
	cmd.Stdin = stdin
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive a killed test
	cmd.WaitDelay = 5 * time.Second                                    // bounds Wait's stdin copy and pipe closes
	p := &proc{logs: &logWatch{addrCh: make(chan string, 1)}}
	cmd.Stderr = p.logs
	p.Proc = refbin.Launch(t, cmd, &refbin.LaunchOptions{NoLine: true, StopTimeout: 10 * time.Second, Name: args[0]})
	return p
}

// url waits for the URL line the process prints first.
func (p *proc) url(t *testing.T) string {
	t.Helper()
	if _, err := p.AwaitLine(); err != nil {
		t.Fatalf("%s URL line: %v\n%s", p.Cmd.Args[1], err, p.logText())
	}
	return p.URL()
}

func (p *proc) logText() string { return p.logs.text() }

// logWatch keeps a process's stderr (JSON lines) and hands over the address of its
// "metrics listening" line.
type logWatch struct {
	mu      sync.Mutex   // guards logs and partial: exec's copying goroutine writes, the test reads
	logs    bytes.Buffer // every byte written
	partial []byte       // the unterminated last line
	addrCh  chan string  // the metrics listener's address, from its log line
}

func (w *logWatch) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.logs.Write(b)
	w.partial = append(w.partial, b...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(b), nil
		}
		var rec struct{ Msg, Address string }
		if json.Unmarshal(w.partial[:i], &rec) == nil && rec.Msg == "metrics listening" {
			select {
			case w.addrCh <- rec.Address:
			default:
			}
		}
		w.partial = w.partial[i+1:]
	}
}

func (w *logWatch) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.logs.String()
}

// metricsAddr waits for the "metrics listening" log line.
func (p *proc) metricsAddr(t *testing.T) string {
	t.Helper()
	select {
	case a := <-p.logs.addrCh:
		return a
	case <-time.After(20 * time.Second):
		t.Fatalf("no metrics listener logged:\n%s", p.logText())
	}
	return ""
}

// stack is a registry and one remote executor, both with metrics, and a harness token.
type stack struct {
	registryURL, token, env string
	registryMetrics         string // host:port
	executorMetrics         string
}

const obsEnv = "env-obs"

func startStack(t *testing.T) *stack {
	t.Helper()
	return startStackEnv(t, nil)
}

// startStackEnv is startStack with extra environment variables for both processes.
func startStackEnv(t *testing.T, env []string) *stack {
	t.Helper()
	dir := t.TempDir()
	var tb [16]byte
	_, _ = rand.Read(tb[:])
	token := "tok_" + hex.EncodeToString(tb[:])
	tokenFile := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokenFile, []byte(token+" roles=* envs=*\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := startEnv(t, nil, env, "registry", "serve", "--token-file", tokenFile, "--db", filepath.Join(dir, "registry.db"),
		"--metrics-listen", "127.0.0.1:0", "--log-level", "info", "--log-format", "json")
	s := &stack{registryURL: reg.url(t), token: token, env: obsEnv}
	s.registryMetrics = reg.metricsAddr(t)
	// The bearer line, then EOF: without --exit-on-stdin-close the executor keeps serving.
	rem := startEnv(t, strings.NewReader(token+"\n"), env, "remote", "--registry", s.registryURL, "--environment-id", obsEnv,
		"--registration-bearer-stdin", "--metrics-listen", "127.0.0.1:0", "--log-level", "info", "--log-format", "json")
	s.executorMetrics = rem.metricsAddr(t)
	s.waitOnline(t)
	return s
}

// waitOnline polls the rendezvous gauge until the executor's socket is up (bounded).
func (s *stack) waitOnline(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(scrape(t, s.registryMetrics), "\nrendezvous_executor_sockets 1\n") {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the executor never came online at the rendezvous")
}

// dial opens one harness stream and initializes it.
func (s *stack) dial(ctx context.Context, t *testing.T, hc *http.Client) (*harness.Client, error) {
	t.Helper()
	c, err := harness.Dial(ctx, &harness.RemoteOptions{Registry: s.registryURL, EnvironmentID: s.env, Token: s.token, HTTPClient: hc,
		Client: &harness.Options{OnNotification: func(harness.Notification) {}}}) // notifications unread: drop them
	if err != nil {
		return nil, err
	}
	if _, err := c.Initialize(ctx, "obs-test", ""); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// runProcess starts argv and reads until it has exited.
func runProcess(ctx context.Context, t *testing.T, c *harness.Client, id string, argv ...string) {
	t.Helper()
	cwd, err := protocol.ParsePathURI("file:///")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartProcess(ctx, protocol.ProcessStartParams{ProcessID: id, Argv: argv, Cwd: cwd, Env: map[string]string{"PATH": "/usr/bin:/bin"}}); err != nil {
		t.Fatalf("process/start %v: %v", argv, err)
	}
	after, wait := uint64(0), uint64(2000)
	for range 100 { // bounded: each read waits at most 2 s
		res, err := c.ReadProcess(ctx, protocol.ProcessReadParams{ProcessID: id, AfterSeq: &after, WaitMs: &wait})
		if err != nil {
			t.Fatalf("process/read: %v", err)
		}
		if res.Closed {
			return
		}
		if res.NextSeq > 0 {
			after = res.NextSeq - 1
		}
	}
	t.Fatalf("process %s never closed", id)
}

// scrape GETs /metrics from addr.
func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scraping %s: %v", addr, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("scraping %s: status %d, %v", addr, resp.StatusCode, err)
	}
	return string(b)
}

// series returns the sample names with labels of a scrape, one per series.
func series(text string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			out[line[:i]] = true
		}
	}
	return out
}

// sample returns the value of one exact series in a scrape, or -1 when absent.
func sample(text, series string) float64 {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, series+" ") {
			var v float64
			if _, err := fmt.Sscan(strings.TrimPrefix(line, series+" "), &v); err == nil {
				return v
			}
		}
	}
	return -1
}

// promtool returns the promtool binary, or skips outside CI when it is not installed (CI
// installs it: .ci/run).
func promtool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not installed (apt-get install prometheus): %v", name, err)
		}
		t.Skipf("%s not installed (apt-get install prometheus)", name)
	}
	return p
}

// checkMetrics runs `promtool check metrics` on a scrape.
func checkMetrics(t *testing.T, what, text string) {
	t.Helper()
	cmd := exec.Command(promtool(t, "promtool"), "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics on the %s scrape: %v\n%s", what, err, out)
	}
}

// badAuthorization is an http.Client whose connect responses carry a corrupted
// harness_key_authorization: the executor's registry validation then refuses the stream.
func badAuthorization() *http.Client {
	return &http.Client{Transport: rewriteConnect{http.DefaultTransport},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type rewriteConnect struct{ next http.RoundTripper }

func (r rewriteConnect) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil || resp.StatusCode != 200 || !strings.HasSuffix(req.URL.Path, "/connect") {
		return resp, err
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		return nil, err
	}
	m["harness_key_authorization"] = "corrupted-" + fmt.Sprint(m["harness_key_authorization"])
	b, _ := json.Marshal(m)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	resp.Header.Del("Content-Length")
	return resp, nil
}
