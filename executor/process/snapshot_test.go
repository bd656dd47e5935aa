package process_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/executor/shellsnap"
)

// snapshotStart returns a `bash -lc script` start with a shellSnapshot and HOME=home.
func snapshotStart(id, home, script string) *protocol.ProcessStartParams {
	p := startParams(id, protocol.FromNative(home), "/bin/bash", "-lc", script)
	p.Env["HOME"] = home
	p.ShellSnapshot = json.RawMessage(`{"scopeId":"t:e","shell":{"name":"bash","path":"/bin/bash"}}`)
	return p
}

func writeRC(t *testing.T, rc string) string {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte(rc), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

// A captured function and export reach the command; the second start reuses the capture
// and no state descriptor or snapshot variable is left to the script.
func TestShellSnapshot_AppliedAndReused(t *testing.T) {
	cache := shellsnap.NewCache()
	defer cache.Close()
	m := newManager(t, &process.Options{ShellSnapshots: cache})
	home := writeRC(t, "echo c >> \"$HOME/count\"\nexport RCVAR=fromrc\nrcfunc() { echo \"rcfunc $*\"; }\n")
	script := `rcfunc x; echo "RCVAR=$RCVAR"; [ -e /proc/$$/fd/15 ] && echo fd15-open; env | grep -c SNAPSHOT; wc -l < "$HOME/count"`
	for i, want := range []string{"rcfunc x\nRCVAR=fromrc\n0\n1\n", "rcfunc x\nRCVAR=fromrc\n0\n1\n"} {
		id := "s" + string(rune('0'+i))
		mustStart(t, m, snapshotStart(id, home, script))
		out, res := readUntilClosed(t, m, id)
		if got := string(out[protocol.StreamStdout]); got != want || *res.ExitCode != 0 {
			t.Fatalf("start %d: stdout %q (stderr %q) exit %v, want %q exit 0", i, got, out[protocol.StreamStderr], *res.ExitCode, want)
		}
	}
}

// A capture still running when the session ends is killed with its process group; the
// start then runs unsnapshotted (or fails because the Manager closed), promptly.
func TestShellSnapshot_CloseKillsCapture(t *testing.T) {
	cache := shellsnap.NewCache()
	m := newManager(t, &process.Options{ShellSnapshots: cache})
	home := writeRC(t, "echo $$ > \"$HOME/pid\"\nsleep 30\n")
	done := make(chan error, 1)
	go func() {
		_, err := m.Start(context.Background(), snapshotStart("c", home, "true"))
		done <- err
	}()
	pidFile := filepath.Join(home, "pid")
	var pid string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			pid = strings.TrimSpace(string(b))
			break
		}
	}
	if pid == "" {
		t.Fatal("the capture never ran ~/.bashrc")
	}
	cache.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Start still blocked 5 s after the cache closed")
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat("/proc/" + pid); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("capture shell %s still alive", pid)
		}
	}
	_, _ = readUntilClosedOrGone(m, "c")
}

// readUntilClosedOrGone drains c if it started; it may not have.
func readUntilClosedOrGone(m *process.Manager, id string) (bool, error) {
	after := uint64(0)
	for range 50 {
		res, err := m.Read(context.Background(), &protocol.ProcessReadParams{ProcessID: id, AfterSeq: &after, WaitMs: u64(200)})
		if err != nil {
			return false, err
		}
		if res.Closed {
			return true, nil
		}
		after = res.NextSeq - 1
	}
	return false, nil
}
