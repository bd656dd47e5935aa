package executor_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/executor/executortest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// harness runs one Server and opens in-memory connections to it.
type harness struct {
	t   *testing.T
	srv *executor.Server
	wg  sync.WaitGroup
}

func newHarness(t *testing.T, opts *executor.Options) *harness {
	h := &harness{t: t, srv: executor.NewServer(opts)}
	t.Cleanup(func() {
		h.srv.Close()
		h.wg.Wait()
	})
	return h
}

// dial opens a connection served until the client end is closed.
func (h *harness) dial() *executortest.Client {
	return h.dialInfo(executor.ConnInfo{Transport: executor.TransportStdio})
}

// dialInfo is dial with the ServeConn's ConnInfo given.
func (h *harness) dialInfo(info executor.ConnInfo) *executortest.Client {
	a, b := executortest.Pipe()
	h.wg.Add(1)
	go func() { // serves b; ends when the pipe closes
		defer h.wg.Done()
		_ = h.srv.ServeConn(context.Background(), b, info)
	}()
	c := executortest.NewClient(h.t, a)
	h.t.Cleanup(c.Close)
	return c
}

func startParams(id string, argv ...string) map[string]any {
	return map[string]any{"processId": id, "argv": argv, "cwd": "file:///", "env": map[string]string{"PATH": "/usr/bin:/bin"}, "tty": false}
}

// waitNotification returns once a notification of method has arrived on c: among notes
// (those Call collected while waiting for its response) or after them.
func waitNotification(c *executortest.Client, notes []map[string]any, method string) {
	for _, m := range notes {
		if m["method"] == method {
			return
		}
	}
	for {
		if c.Recv()["method"] == method { // Recv fails the test after 5 s of silence
			return
		}
	}
}

// initCaps returns the capabilities in an initialize result's environmentInfo.
func initCaps(init map[string]any) map[string]any {
	caps, _ := init["environmentInfo"].(map[string]any)["capabilities"].(map[string]any)
	return caps
}

func errMessage(m map[string]any) (float64, string) {
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(float64)
	msg, _ := e["message"].(string)
	return code, msg
}

func TestServer_PipelinedRequestsAnswerInOrder(t *testing.T) {
	h := newHarness(t, nil)
	c := h.dial()
	c.Handshake("")
	c.Send(`{"id":1,"method":"environment/info"}`)
	c.Send(`{"id":2,"method":"environment/info","params":null}`)
	c.Send(`{"id":"3","method":"environment/status","params":{}}`)
	for _, want := range []string{"1", "2", "3"} {
		m := c.Recv()
		if got := fmt.Sprint(m["id"]); got != want {
			t.Fatalf("got id %s, want %s (%v)", got, want, m)
		}
		if m["result"] == nil {
			t.Fatalf("id %s: got %v, want a result", want, m)
		}
	}
}

func TestServer_ResumeAfterDisconnectDuringLongRead(t *testing.T) {
	h := newHarness(t, nil)
	c := h.dial()
	init := c.Handshake("")
	sid := init["sessionId"].(string)
	resp, _ := c.Call(1, "process/start", startParams("p", "sleep", "30"))
	if resp["result"] == nil {
		t.Fatalf("start: %v", resp)
	}
	c.Send(map[string]any{"id": 2, "method": "process/read", "params": map[string]any{"processId": "p", "waitMs": 5000}})
	c.Close() // disconnect mid-read

	deadline := time.Now().Add(time.Second)
	var res map[string]any
	for { // the old connection's detach races the resume: -32010 is retryable
		c2 := h.dial()
		resp, _ := c2.Call(0, "initialize", map[string]any{"clientName": "x", "resumeSessionId": sid})
		if r, ok := resp["result"].(map[string]any); ok {
			res = r
			c2.Send(`{"method":"initialized"}`)
			read, _ := c2.Call(3, "process/read", map[string]any{"processId": "p"})
			rr := read["result"].(map[string]any)
			if rr["exited"] != false || rr["closed"] != false {
				t.Fatalf("process did not survive the disconnect: %v", rr)
			}
			term, notes := c2.Call(4, "process/terminate", map[string]any{"processId": "p"})
			if term["result"].(map[string]any)["running"] != true {
				t.Fatalf("terminate: %v %v", term, notes)
			}
			break
		}
		if code, _ := errMessage(resp); code != -32010 || time.Now().After(deadline) {
			t.Fatalf("resume: got %v, want success within 1 s", resp)
		}
		c2.Close()
	}
	if res["sessionId"] != sid {
		t.Fatalf("got session %v, want %s", res["sessionId"], sid)
	}
}

func TestServer_ConcurrentStartsWithOneID(t *testing.T) {
	h := newHarness(t, &executor.Options{ConcurrentRequests: 4})
	c := h.dial()
	c.Handshake("")
	c.Send(map[string]any{"id": 1, "method": "process/start", "params": startParams("proc-1", "sleep", "5")})
	c.Send(map[string]any{"id": 2, "method": "process/start", "params": startParams("proc-1", "sleep", "5")})
	var ok, dup int
	for ok+dup < 2 {
		m := c.Recv()
		if _, isNote := m["method"]; isNote {
			continue
		}
		if m["result"] != nil {
			ok++
			continue
		}
		if code, msg := errMessage(m); code == -32600 && msg == "process proc-1 already exists" {
			dup++
			continue
		}
		t.Fatalf("unexpected reply %v", m)
	}
	if ok != 1 || dup != 1 {
		t.Fatalf("got %d successes and %d duplicates, want 1 and 1", ok, dup)
	}
}

func TestServer_TerminateAfterExitIsNotRunning(t *testing.T) {
	h := newHarness(t, nil)
	c := h.dial()
	c.Handshake("")
	// `true` may exit before its start response is queued: its closed can then arrive
	// among the notifications Call collected while waiting for that response.
	_, notes := c.Call(1, "process/start", startParams("t", "true"))
	waitNotification(c, notes, "process/closed")
	resp, _ := c.Call(2, "process/terminate", map[string]any{"processId": "t"})
	if got := resp["result"].(map[string]any)["running"]; got != false {
		t.Fatalf("got running=%v, want false", got)
	}
}

func TestServer_CloseKillsEveryProcess(t *testing.T) {
	h := newHarness(t, nil)
	c := h.dial()
	c.Handshake("")
	dir := t.TempDir()
	pidFile := dir + "/pid"
	c.Call(1, "process/start", startParams("s", "sh", "-c", "echo $$ > "+pidFile+"; exec sleep 60"))
	pid := waitPid(t, pidFile)
	h.srv.Close()
	waitGone(t, pid)
}

func TestServer_DetachedSessionExpiresAfterTTL(t *testing.T) {
	h := newHarness(t, &executor.Options{SessionTTL: 100 * time.Millisecond})
	c := h.dial()
	sid := c.Handshake("")["sessionId"].(string)
	pidFile := t.TempDir() + "/pid"
	c.Call(1, "process/start", startParams("s", "sh", "-c", "echo $$ > "+pidFile+"; exec sleep 60"))
	pid := waitPid(t, pidFile)
	c.Close()
	waitGone(t, pid)
	c2 := h.dial()
	resp, _ := c2.Call(0, "initialize", map[string]any{"clientName": "x", "resumeSessionId": sid})
	if code, msg := errMessage(resp); code != -32600 || msg != "unknown session id "+sid {
		t.Fatalf("got %v, want -32600 unknown session id", resp)
	}
}

func TestServer_ResumeOfAttachedSessionIsRetryable(t *testing.T) {
	h := newHarness(t, nil)
	c := h.dial()
	sid := c.Handshake("")["sessionId"].(string)
	c2 := h.dial()
	resp, _ := c2.Call(0, "initialize", map[string]any{"clientName": "x", "resumeSessionId": sid})
	code, msg := errMessage(resp)
	if code != -32010 || msg != "session "+sid+" is already attached to another connection" {
		t.Fatalf("got %v, want -32010", resp)
	}
	// The first connection is unaffected.
	st, _ := c.Call(1, "environment/status", nil)
	if st["result"] == nil {
		t.Fatalf("first connection broken: %v", st)
	}
}

func TestServer_MalformedInputKeepsConnection(t *testing.T) {
	h := newHarness(t, nil)
	c := h.dial()
	for _, bad := range []string{"not-json", "\x00\xff\xfe", `{"id":1,"method":"x","params":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + "}", "[]"} {
		c.Send(bad)
		m := c.Recv()
		if code, msg := errMessage(m); code != -32600 || m["id"] != float64(-1) || !strings.HasPrefix(msg, "failed to parse JSON-RPC message from exec-server stdio: ") {
			t.Fatalf("input %q: got %v", bad, m)
		}
	}
	c.Handshake("")
	big := strings.Repeat("a", 10<<20)
	resp, _ := c.Call(1, "process/write", map[string]any{"processId": "none", "chunk": "@@" + big, "writeId": "w"})
	if code, _ := errMessage(resp); code != -32602 {
		t.Fatalf("10 MB invalid base64: got %v, want -32602", resp)
	}
	st, _ := c.Call(2, "environment/status", nil)
	if st["result"] == nil {
		t.Fatalf("connection broken after bad input: %v", st)
	}
}

// waitPid reads a pid written by a child, within 5 s.
func waitPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(path)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			var pid int
			fmt.Sscan(string(b), &pid)
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("child never wrote %s", path)
	return 0
}

// waitGone waits up to 5 s for pid to disappear (killed and reaped).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d still exists", pid)
}
