package remote_test

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/execlab/executor/cmd/executor/internal/remote"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
	"github.com/execlab/executor/noise"
)

// TestRunCommand_StdinEOFStopsAndClosesServer: RunCommand reads the bearer line, registers,
// serves a harness stream; stdin EOF (--exit-on-stdin-close) then ends it with nil (exit 0),
// and the Server it created is closed before it returns: the harness's process is gone.
func TestRunCommand_StdinEOFStopsAndClosesServer(t *testing.T) {
	fx := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- remote.RunCommand(ctx, &remote.Command{
			RegistryURL: fx.registry.URL, EnvironmentID: testEnvID,
			Auth:             remote.AuthConfig{BearerStdin: true},
			ExitOnStdinClose: true,
			Getenv:           func(string) string { return "" }, // no TRACEPARENT, keys or HOME
		}, pr)
	}()
	stopped := false
	defer func() {
		if !stopped {
			pw.Close()
			<-done
		}
	}()
	if _, err := io.WriteString(pw, testBearer+"\n"); err != nil {
		t.Fatal(err)
	}
	sock := fx.nextSocket(ctx) // dialed after a register
	if regs := fx.registerCalls(); len(regs) == 0 || regs[0].header.Get("Authorization") != "Bearer "+testBearer {
		t.Errorf("register: got %d calls, want the first to carry the stdin bearer", len(regs))
	}
	harnessID, _ := noise.GenerateIdentity(nil)
	cl := fx.initialize(ctx, t, sock, "cmd", harnessID)
	defer cl.Close()
	if _, err := cl.StartProcess(ctx, protocol.ProcessStartParams{ProcessID: "p",
		Argv: []string{"sh", "-c", "echo $$; exec sleep 60"}, Cwd: protocol.FromNative(os.TempDir()),
		Env: map[string]string{"PATH": "/usr/bin:/bin"}}); err != nil {
		t.Fatal(err)
	}
	pid := readPid(ctx, t, cl, "p")

	pw.Close()
	stopped = true
	if err := <-done; err != nil {
		t.Fatalf("RunCommand after stdin EOF: got %v, want nil", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d after RunCommand returned: kill(0) got %v, want ESRCH (server closed)", pid, err)
	}
}

// readPid long-polls process id's output for the pid its shell printed.
func readPid(ctx context.Context, t *testing.T, cl *harness.Client, id string) int {
	t.Helper()
	var out strings.Builder
	var after uint64
	wait := uint64(5000)
	for !strings.Contains(out.String(), "\n") {
		res, err := cl.ReadProcess(ctx, protocol.ProcessReadParams{ProcessID: id, AfterSeq: &after, WaitMs: &wait})
		if err != nil {
			t.Fatalf("process/read: %v", err)
		}
		for _, c := range res.Chunks {
			out.Write(c.Chunk)
		}
		if res.NextSeq > 0 {
			after = res.NextSeq - 1 // afterSeq is exclusive, nextSeq the next to come
		}
		if res.Exited {
			t.Fatalf("process exited early; output %q", out.String())
		}
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("pid line %q: %v", out.String(), err)
	}
	return pid
}
