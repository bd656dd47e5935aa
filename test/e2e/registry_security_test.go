package e2e_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/registry/registrytest"
)

// TestRegistryToken_RequiresScope: `executor registry token` refuses to mint a token
// without an explicit --roles and --envs (usage error, exit 2); scoped ones, and '*' said
// explicitly, work (security issue 13, finding 6).
func TestRegistryToken_RequiresScope(t *testing.T) {
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(remoteExecutorBin(t), append([]string{"registry", "token"}, args...)...)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out.String()), errb.String(), code
	}
	for _, args := range [][]string{nil, {"--roles", "harness"}, {"--envs", "env-1"}, {"--roles", "", "--envs", "*"}} {
		out, stderr, code := run(args...)
		if code != 2 || out != "" || !strings.Contains(stderr, "explicit scope") {
			t.Errorf("registry token %q: got exit %d, stdout %q, stderr %q; want exit 2, no token, an 'explicit scope' usage error", args, code, out, stderr)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--roles", "harness", "--envs", "env-1"}, `^xt_\S+ roles=harness envs=env-1$`},
		{[]string{"--roles", "executor,harness", "--envs", "a,b"}, `^xt_\S+ roles=executor,harness envs=a,b$`},
		{[]string{"--roles", "*", "--envs", "*"}, `^xt_\S+ roles=\* envs=\*$`},
	} {
		out, stderr, code := run(tc.args...)
		if code != 0 || !regexp.MustCompile(tc.want).MatchString(out) {
			t.Errorf("registry token %q: got exit %d, %q (stderr %q); want a line matching %s", tc.args, code, out, stderr, tc.want)
		}
	}
}

// TestDev_TokensScoped: `executor dev` hands out a harness-only token for its environment:
// it cannot register an executor (403), and exec with it works (TestDev_PrintsWorkingExecCommand).
func TestDev_TokensScoped(t *testing.T) {
	m := startDev(t)
	raw, err := os.ReadFile(m[3])
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(raw))
	if !regexp.MustCompile(`^\S+ roles=harness envs=` + regexp.QuoteMeta(m[2]) + `$`).MatchString(line) {
		t.Fatalf("dev token file: got %q, want one line TOKEN roles=harness envs=%s", line, m[2])
	}
	tok := strings.Fields(line)[0]
	body := `{"security_profile":"noise_hybrid_ik_v1","executor_public_key":` + testKeyJSON() + `}`
	for _, env := range []string{m[2], "other-env"} {
		req, _ := http.NewRequest(http.MethodPost, m[1]+"/cloud/environment/"+env+"/register", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("register in %s with dev's harness token: got %d, want 403", env, resp.StatusCode)
		}
	}
}

// testKeyJSON returns a well-formed random public-key JSON (spec/registry-auth.md §9).
func testKeyJSON() string { return string(registrytest.RandomKeyJSON()) }

// startRegistryWithFDLimit runs `executor registry serve` under `ulimit -n fds` and returns
// its URL and a function returning its stderr so far.
func startRegistryWithFDLimit(t *testing.T, fds int, tokenFile string) (string, func() string) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("sh", "-c", fmt.Sprintf(`ulimit -n %d && exec "$0" "$@"`, fds), remoteExecutorBin(t),
		"registry", "serve", "--listen", "127.0.0.1:0", "--db", filepath.Join(dir, "r.db"), "--token-file", tokenFile)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir}
	var mu sync.Mutex
	var stderr bytes.Buffer
	cmd.Stderr = lockedWriter{&mu, &stderr}
	p := refbin.Launch(t, cmd, &refbin.LaunchOptions{StopTimeout: 10 * time.Second, Name: "registry serve"})
	return p.URL(), func() string { mu.Lock(); defer mu.Unlock(); return stderr.String() }
}

// TestRegistryServe_IdleSocketsUnderFDLimit: `registry serve` limited to 128 file
// descriptors, facing 1,000 idle loopback sockets (half after one GET /readyz kept alive,
// half silent), still answers a legitimate register at once (security issue 13, finding 2:
// 88 idle sockets on a 100-fd process timed a connect out).
func TestRegistryServe_IdleSocketsUnderFDLimit(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokenFile, []byte("tok-fd roles=executor envs=env-fd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url, _ := startRegistryWithFDLimit(t, 128, tokenFile)
	addr := strings.TrimPrefix(url, "http://")
	saturated := false
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 1000 {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("idle socket %d: %v", i, err)
		}
		conns = append(conns, c)
		if i%2 == 0 {
			fmt.Fprintf(c, "GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
			if !saturated {
				// Bounded: once one answer fails to come within a second (the server
				// stopped accepting), later sockets just send and stay.
				_ = c.SetReadDeadline(time.Now().Add(time.Second))
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err == nil {
					resp.Body.Close()
				} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
					saturated = true
				}
			}
		}
	}
	client := &http.Client{Timeout: 5 * time.Second}
	body := `{"security_profile":"noise_hybrid_ik_v1","executor_public_key":` + testKeyJSON() + `}`
	req, _ := http.NewRequest(http.MethodPost, url+"/cloud/environment/env-fd/register", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok-fd")
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("register behind 1,000 idle sockets under a 128-fd limit: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("register behind 1,000 idle sockets: got %d, want 200", resp.StatusCode)
	}
	t.Logf("register answered in %v", time.Since(start))
}

// TestRegistryServe_StartupWarnings: an unscoped token in a group/world-readable token file
// is served, with a warning for each.
func TestRegistryServe_StartupWarnings(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokenFile, []byte("bare-token\nscoped roles=harness envs=e\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tokenFile, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr := startRegistryWithFDLimit(t, 1024, tokenFile)
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := stderr()
		if strings.Contains(s, "readable by group or others") && strings.Contains(s, "every role in every environment") {
			if strings.Contains(s, "bare-token") || strings.Contains(s, "line=2") {
				t.Errorf("warnings echo the token or flag the scoped line: %s", s)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("start-up warnings missing; stderr: %s", s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRegistryServe_TrickledBodyCutOff: an authenticated client trickling a register body
// one byte per 100 ms is cut off by `registry serve` after the 10 s request read timeout
// (security issue 13, finding 2: it used to be read forever).
func TestRegistryServe_TrickledBodyCutOff(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the 10 s read timeout")
	}
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokenFile, []byte("tok-trickle roles=executor envs=env-t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url, _ := startRegistryWithFDLimit(t, 1024, tokenFile)
	body := `{"security_profile":"noise_hybrid_ik_v1","executor_public_key":` + testKeyJSON() + `}`
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /cloud/environment/env-t/register HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok-trickle\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	ended := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, c); close(ended) }()
	start := time.Now()
	for i := 0; ; i++ {
		select {
		case <-ended:
			if el := time.Since(start); el > 13*time.Second {
				t.Errorf("trickled body cut off after %v, want about 10 s", el)
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("trickled body still being read after %v (%d bytes sent)", time.Since(start), i)
		}
		if i < len(body)-1 {
			_, _ = c.Write([]byte{body[i]})
		}
	}
}
