package interop_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/noise"
	"github.com/execlab/executor/noise/channel"
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
	startReference(t, exec.Command(ref, "exec-server", "forward", "--remote", fx.registry.URL,
		"--environment-id", forwardEnvID, "--connect", serveURL, "--registration-bearer-stdin"), forwardBearer, nil)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sock := fx.nextSocket(ctx)
	defer sock.conn.CloseNow()
	executorKey, harness, streamID, rc := fx.openStream(ctx, t, sock)
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

// startOurServe runs `executor serve --listen ws://127.0.0.1:0`, returning the ws:// URL it
// prints; Cleanup fails the test when serve ignores SIGTERM.
func startOurServe(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(oursBinary(t), "serve", "--listen", "ws://127.0.0.1:0")
	return refbin.Launch(t, cmd, &refbin.LaunchOptions{Line: wsURL, Exit: refbin.ExitOnSIGTERM, Name: "executor serve"}).URL()
}

// wsURL is the line `executor serve` prints first.
var wsURL = regexp.MustCompile(`^ws://\S+$`)
