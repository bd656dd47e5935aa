package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
)

// stdioExchange runs `bin args… --listen stdio` with a fresh CODEX_HOME, sends the
// handshake and lines, reads one reply per line (ids 1…len(lines)), then closes stdin.
// Replies are summarized as "error {…}" or "started <sandboxType>".
func stdioExchange(t *testing.T, bin string, args []string, lines []string) map[int]string {
	t.Helper()
	home := refbin.CodexHome(t)
	cmd := exec.Command(bin, append(args, "--listen", "stdio")...)
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "TMPDIR="+home)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stdin.Close(); _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	go func() { // the writer; a failed write shows as missing replies
		w := bufio.NewWriter(stdin)
		w.WriteString(`{"id":0,"method":"initialize","params":{"clientName":"proxyflags"}}` + "\n")
		w.WriteString(`{"method":"initialized"}` + "\n")
		for _, l := range lines {
			w.WriteString(l + "\n")
		}
		_ = w.Flush()
	}()
	got := map[int]string{}
	replies := make(chan map[int]string, 1)
	go func() { // the reader: returns once every line has a reply or stdout ends
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for len(got) < len(lines) && sc.Scan() {
			var m struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil || *m.ID == 0 {
				continue
			}
			if m.Error != nil {
				got[*m.ID] = "error " + string(m.Error)
				continue
			}
			var r struct {
				SandboxType string `json:"sandboxType"`
			}
			_ = json.Unmarshal(m.Result, &r)
			got[*m.ID] = "started " + r.SandboxType
		}
		replies <- got
	}()
	select {
	case g := <-replies:
		return g
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("%s: no reply to every request within 20 s", bin)
		return nil
	}
}

// `exec-server --tcp-upstream-proxy HOST:PORT` (codex 0.171.0) refuses every
// managed-network start after managedNetwork decoded; ours answers the same, also with
// --linux-sandbox-transparent-tcp (whose own effect is netproxy_transparent_tcp_flag's,
// test/conformance). 0.169.0 has neither flag.
func TestProxyFlagsInterop_TCPUpstream(t *testing.T) {
	cwd := "file://" + t.TempDir()
	start := func(id int, extra string) string {
		return `{"id":` + strconv.Itoa(id) + `,"method":"process/start","params":{"processId":"p` + strconv.Itoa(id) +
			`","argv":["true"],"cwd":"` + cwd + `","env":{"PATH":"/usr/bin:/bin"},"tty":false` + extra + `}}`
	}
	lines := []string{
		start(1, `,"managedNetwork":{}`),
		start(2, `,"managedNetwork":null`),
		start(3, `,"managedNetwork":{"transparentTcp":"x"}`),
		start(4, `,"managedNetwork":{"transparentTcp":true}`),
		start(5, ``),
		start(6, `,"enforceManagedNetwork":true`),
		`{"id":7,"method":"process/start","params":{"processId":"p7","argv":[],"cwd":"` + cwd + `","env":{},"tty":false,"managedNetwork":{}}}`,
	}
	args := []string{"--tcp-upstream-proxy", "127.0.0.1:3128", "--linux-sandbox-transparent-tcp"}
	rel := refbin.ReleaseOf(t, "0.171.0")
	want := stdioExchange(t, rel.Path, append([]string{"exec-server"}, args...), lines)
	got := stdioExchange(t, oursBinary(t), append([]string{"serve"}, args...), lines)
	if len(want) != len(lines) {
		t.Fatalf("reference answered %d of %d requests: %v", len(want), len(lines), want)
	}
	for id := 1; id <= len(lines); id++ {
		if got[id] != want[id] {
			t.Errorf("request %d: ours %s, reference %s", id, got[id], want[id])
		}
	}
	if !strings.Contains(want[1], "a mandatory TCP upstream requires an executor-local managed proxy") {
		t.Errorf("reference answer to managedNetwork {} = %s; the flag did not take effect", want[1])
	}
	// Bad values are usage errors (exit 2) on both sides.
	for _, v := range []string{"x", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:99999"} {
		for name, argv := range map[string][]string{
			"reference": {rel.Path, "exec-server", "--listen", "ws://127.0.0.1:0", "--tcp-upstream-proxy", v},
			"ours":      {oursBinary(t), "serve", "--listen", "ws://127.0.0.1:0", "--tcp-upstream-proxy", v},
		} {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = append(os.Environ(), "CODEX_HOME="+refbin.CodexHome(t))
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
				t.Errorf("%s --tcp-upstream-proxy %q: %v, want exit 2", name, v, err)
			}
		}
	}
}
