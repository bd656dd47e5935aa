package e2e_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
)

// TestServe_SIGTERMKillsProcessesAndExitsZero starts `executor serve`, runs a long
// process in a session, sends SIGTERM (via startLineProcess's cleanup, which requires a
// zero exit within 5 s) and checks the child is gone afterwards.
func TestServe_SIGTERMKillsProcessesAndExitsZero(t *testing.T) {
	pidFile := t.TempDir() + "/pid"
	var pid int
	t.Run("serve", func(t *testing.T) {
		m := startLineProcess(t, regexp.MustCompile(`^(ws://127\.0\.0\.1:[0-9]+)$`), "serve")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c, err := harness.DialLocal(ctx, m[1], nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Initialize(ctx, "e2e", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := c.StartProcess(ctx, protocol.ProcessStartParams{ProcessID: "long",
			Argv: []string{"sh", "-c", "echo $$ > " + pidFile + "; exec sleep 600"},
			Cwd:  "file:///", Env: map[string]string{"PATH": "/usr/bin:/bin"}}); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(5 * time.Second); pid == 0 && time.Now().Before(deadline); {
			if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
				fmt.Sscan(string(b), &pid)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if pid == 0 {
			t.Fatal("child never started")
		}
	}) // the subtest's cleanup sent SIGTERM and waited for exit 0
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(pid, 0) != syscall.ESRCH {
		if time.Now().After(deadline) {
			t.Fatalf("child %d survived the executor's SIGTERM", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
