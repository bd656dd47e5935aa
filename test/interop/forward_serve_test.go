package interop_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/noise"
	"github.com/execlab/executor/noise/channel"
	"github.com/execlab/executor/relay/frame"
)

const (
	forwardEnvID  = "env-forward"
	forwardRegID  = "reg-forward-1"
	forwardBearer = "forward-registration-bearer"
)

// TestForward_ReferenceRelayInFrontOfOurServer puts the released binary's relay and Noise
// endpoint in front of our JSON-RPC server: `codex exec-server forward --remote <our registry
// fixture> --environment-id E --connect ws://127.0.0.1:<port of executor serve>`. The test
// (rendezvous + Go harness) completes the Noise handshake with the Rust side, then initialize,
// process/start and output are answered by our `executor serve` behind it. Runs against each
// reference release.
func TestForward_ReferenceRelayInFrontOfOurServer(t *testing.T) {
	refbin.ForEachRelease(t, testForward)
}

func testForward(t *testing.T, r refbin.Release) {
	ref := r.Path
	serveURL := startOurServe(t)

	fx := newRegistryFixture(t, forwardEnvID, forwardRegID, forwardBearer)
	defer fx.checkHandlers()
	home := codexHome(t)
	cmd := exec.Command(ref, "exec-server", "forward", "--remote", fx.registry.URL,
		"--environment-id", forwardEnvID, "--connect", serveURL, "--registration-bearer-stdin")
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "CODEX_HOME=" + home,
		"RUST_LOG=" + envOr("EXECUTOR_INTEROP_RUST_LOG", "warn")}
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting reference forward: %v", err)
	}
	t.Cleanup(func() {
		stopProcess(t, cmd)
		stdin.Close()
		if t.Failed() {
			t.Logf("reference forward output:\n%s", logs.String())
		}
	})
	io.WriteString(stdin, forwardBearer+"\n")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sock := fx.nextSocket(ctx)
	defer sock.conn.CloseNow()
	regs := fx.registerCalls()
	if len(regs) != 1 {
		t.Fatalf("got %d register calls, want 1", len(regs))
	}
	executorKey, err := noise.ParsePublicKeyJSON(regs[0].executorKey)
	if err != nil {
		t.Fatalf("parsing executor_public_key: %v", err)
	}
	harness, err := noise.GenerateIdentity(nil)
	if err != nil {
		t.Fatal(err)
	}
	streamID := newUUID(t)
	rc := newWSRecordConn(sock.conn, streamID)
	if err := rc.writeFrame(ctx, &frame.Frame{Version: frame.Version, StreamID: streamID, Body: &frame.Resume{}}); err != nil {
		t.Fatal(err)
	}
	conn, err := channel.Initiator(ctx, rc, &channel.InitiatorConfig{
		Static: harness, ResponderStatic: executorKey,
		Prologue:      noise.AppendPrologue(nil, forwardEnvID, forwardRegID, streamID),
		Authorization: []byte("forward-authorization"),
	})
	if err != nil {
		t.Fatalf("Noise handshake with the reference forwarder: %v", err)
	}
	defer conn.Close()

	rpc := &rpcClient{t: t, conn: conn}
	var init struct {
		SessionID string `json:"sessionId"`
	}
	res := rpc.call(ctx, "initialize", `{"clientName":"executor-forward-interop","resumeSessionId":null}`)
	if err := json.Unmarshal(res, &init); err != nil || init.SessionID == "" {
		t.Fatalf("initialize through the forwarder: %s (err %v)", res, err)
	}
	rpc.notify(ctx, "initialized", `{}`)
	rpc.call(ctx, "process/start",
		`{"processId":"fwd-1","argv":["sh","-c","echo served-by-go"],"cwd":"file:///tmp","env":{"PATH":"/usr/bin:/bin"},"tty":false}`)
	if got := rpc.outputUntil(ctx, "fwd-1", "served-by-go\n"); got != "served-by-go\n" {
		t.Errorf("process output through the forwarder: got %q, want %q", got, "served-by-go\n")
	}
}

// startOurServe builds cmd/executor and runs `executor serve --listen ws://127.0.0.1:0`,
// returning the ws:// URL it prints.
func startOurServe(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "executor")
	build := exec.Command("go", "build", "-o", bin, "./cmd/executor")
	build.Dir = repoRoot()
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as released: no stage can be preloaded
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building executor: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "serve", "--listen", "ws://127.0.0.1:0")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopProcess(t, cmd) })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ws://") {
		t.Fatalf("executor serve printed %q (err %v), want ws://IP:PORT", line, err)
	}
	return strings.TrimSpace(line)
}

func stopProcess(t *testing.T, cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Errorf("%s ignored SIGTERM for 5 s; killing it", filepath.Base(cmd.Path))
		_ = cmd.Process.Kill()
		<-done
	}
}
