package process_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/executor/protocol"
)

// fakeClient is a process.ClientCaller that records network/policyRequest calls and
// answers each with answer(host), or blocks until ctx ends when answer returns nil.
type fakeClient struct {
	mu     sync.Mutex
	calls  []string // "method params"
	asked  chan struct{}
	ended  chan struct{} // a blocked call returned
	answer func(host string) json.RawMessage
}

func (f *fakeClient) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	b, _ := json.Marshal(params)
	f.mu.Lock()
	f.calls = append(f.calls, method+" "+string(b))
	f.mu.Unlock()
	f.asked <- struct{}{}
	var p struct {
		Request struct {
			Host string `json:"host"`
		} `json:"request"`
	}
	_ = json.Unmarshal(b, &p)
	if a := f.answer(p.Request.Host); a != nil {
		return a, nil
	}
	<-ctx.Done()
	f.ended <- struct{}{}
	return nil, ctx.Err()
}

// TestStart_NetworkProxyDecisionCallback: with policyDecisionTimeoutMs, an allowlist miss
// is put to Options.Client as network/policyRequest {processId, request{protocol, host,
// port}} (spec/network-proxy.md §6), and terminating the process cancels a pending call.
func TestStart_NetworkProxyDecisionCallback(t *testing.T) {
	fc := &fakeClient{asked: make(chan struct{}, 8), ended: make(chan struct{}, 1), answer: func(host string) json.RawMessage {
		if host == "hang.localhost" {
			return nil
		}
		return json.RawMessage(`{"decision":{"type":"deny","reason":"no thanks"}}`)
	}}
	m := newManager(t, &process.Options{Client: fc})
	script := `exec 3<>/dev/tcp/127.0.0.1/${HTTP_PROXY##*:}; printf 'GET http://%s:9/ HTTP/1.1\r\nHost: %s:9\r\n\r\n' "$1" "$1" >&3; cat <&3`
	p := startParams("cb", tmpURI(t), "bash", "-c", script, "sh", "no.localhost")
	p.NetworkProxy = json.RawMessage(`{"policyDecisionTimeoutMs":60000,` + string(proxyConfig(`,"domains":{"localhost":"allow"}`))[1:])
	mustStart(t, m, p)
	out, _ := readUntilClosed(t, m, "cb")
	if s := string(out[protocol.StreamStdout]); !strings.Contains(s, "403 Forbidden") || !strings.Contains(s, `"reason":"no thanks","decision":"deny","source":"decider"`) {
		t.Fatalf("child got %q, want the client's deny", s)
	}
	fc.mu.Lock()
	got := append([]string(nil), fc.calls...)
	fc.mu.Unlock()
	if len(got) != 1 || got[0] != `network/policyRequest {"processId":"cb","request":{"protocol":"http","host":"no.localhost","port":9}}` {
		t.Fatalf("calls = %q", got)
	}

	<-fc.asked
	p = startParams("hang", tmpURI(t), "bash", "-c", script, "sh", "hang.localhost")
	p.NetworkProxy = json.RawMessage(`{"policyDecisionTimeoutMs":60000,` + string(proxyConfig(`,"domains":{"localhost":"allow"}`))[1:])
	mustStart(t, m, p)
	select {
	case <-fc.asked:
	case <-time.After(20 * time.Second):
		t.Fatal("the hanging request was never put to the client")
	}
	if _, err := m.Terminate(context.Background(), &protocol.ProcessTerminateParams{ProcessID: "hang"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-fc.ended:
	case <-time.After(20 * time.Second):
		t.Fatal("terminate did not cancel the pending policy decision")
	}
}
