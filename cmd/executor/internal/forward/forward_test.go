package forward_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/execlab/executor/cmd/executor/internal/forward"
	"github.com/execlab/executor/executor/executortest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
}

// echoTarget is a WebSocket server that answers each message with "echo:"+message, and
// closes after a message "bye".
func echoTarget(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			_, msg, err := c.Read(r.Context())
			if err != nil || string(msg) == "bye" {
				return
			}
			if err := c.Write(r.Context(), websocket.MessageText, append([]byte("echo:"), msg...)); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

func TestBridge_PassesMessagesAndEndsWithTarget(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	harness, end := executortest.Pipe()
	defer harness.Close()
	done := make(chan error, 1)
	go func() { done <- forward.New(&forward.Options{Target: echoTarget(t)}).Bridge(ctx, end) }()
	for _, m := range []string{`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, "second"} {
		if err := harness.WriteMessage(ctx, []byte(m)); err != nil {
			t.Fatal(err)
		}
		got, err := harness.ReadMessage(ctx)
		if err != nil || string(got) != "echo:"+m {
			t.Fatalf("got %q (%v), want %q", got, err, "echo:"+m)
		}
	}
	if err := harness.WriteMessage(ctx, []byte("bye")); err != nil { // the target closes
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("Bridge after the target closed: nil error, want the reason")
		}
	case <-ctx.Done():
		t.Fatal("Bridge did not return after the target closed")
	}
	if _, err := harness.ReadMessage(ctx); err == nil {
		t.Errorf("harness stream still open after the target closed")
	}
}

func TestBridge_TargetDownClosesHarness(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	harness, end := executortest.Pipe()
	defer harness.Close()
	err := forward.New(&forward.Options{Target: "ws://127.0.0.1:1"}).Bridge(ctx, end)
	if err == nil {
		t.Fatal("Bridge to a closed port: nil error")
	}
	if _, err := harness.ReadMessage(ctx); err == nil {
		t.Errorf("harness stream still open after the target refused")
	}
}

func TestCheckTarget(t *testing.T) {
	for raw, ok := range map[string]bool{"ws://127.0.0.1:1": true, "wss://h/x": true, "http://h": false, "notaurl": false, "": false} {
		if err := forward.CheckTarget(raw); (err == nil) != ok {
			t.Errorf("CheckTarget(%q): %v", raw, err)
		}
	}
}
