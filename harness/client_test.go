package harness_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/execlab/executor/harness"
	"github.com/execlab/executor/jsonwire"
)

// callResult is the outcome of a Call run in a goroutine.
type callResult struct {
	res map[string]any
	err error
}

func goCall(c *harness.Client, ctx context.Context, method string, params any) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		var r callResult
		r.err = c.Call(ctx, method, params, &r.res)
		ch <- r
	}()
	return ch
}

func TestClient_RequestWireShape(t *testing.T) {
	tests := []struct {
		name   string
		params any
		want   string
	}{
		{"no params", nil, `{"id":1,"method":"environment/info"}`},
		{"object params", map[string]int{"a": 1}, `{"id":1,"method":"environment/info","params":{"a":1}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, srv := openFake(t, nil)
				defer c.Close()
				done := goCall(c, context.Background(), "environment/info", tc.params)
				m := srv.recv()
				if got := string(m.raw); got != tc.want {
					t.Errorf("got request %s, want %s", got, tc.want)
				}
				srv.send(`{"id":1,"result":{}}`)
				if r := <-done; r.err != nil {
					t.Errorf("got error %v, want nil", r.err)
				}
			})
		})
	}
}

func TestClient_InitializeWire(t *testing.T) {
	tests := []struct {
		name, resume, wantInit string
	}{
		{"new session", "", `{"id":1,"method":"initialize","params":{"clientName":"bench"}}`},
		{"resume", "s-1", `{"id":1,"method":"initialize","params":{"clientName":"bench","resumeSessionId":"s-1"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, srv := openFake(t, nil)
				defer c.Close()
				type initOut struct {
					sid string
					err error
				}
				done := make(chan initOut, 1)
				go func() {
					res, err := c.Initialize(context.Background(), "bench", tc.resume)
					done <- initOut{res.SessionID, err}
				}()
				if got := string(srv.recv().raw); got != tc.wantInit {
					t.Errorf("got %s, want %s", got, tc.wantInit)
				}
				srv.send(`{"id":1,"result":{"sessionId":"s-1","environmentInfo":null}}`)
				if got, want := string(srv.recv().raw), `{"method":"initialized","params":{}}`; got != want {
					t.Errorf("got %s, want %s", got, want)
				}
				r := <-done
				if r.err != nil || r.sid != "s-1" {
					t.Errorf("got (%q, %v), want (\"s-1\", nil)", r.sid, r.err)
				}
			})
		})
	}
}

func TestClient_CallCorrelatesOutOfOrderReplies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, srv := openFake(t, nil)
		defer c.Close()
		const n = 5
		calls := make([]<-chan callResult, n)
		ids := make([]string, n)
		for i := range n {
			calls[i] = goCall(c, context.Background(), "m", map[string]int{"i": i})
			m := srv.recv()
			ids[i] = m.id()
			if want := fmt.Sprint(i + 1); ids[i] != want {
				t.Errorf("call %d: got id %s, want %s", i, ids[i], want)
			}
		}
		for i := n - 1; i >= 0; i-- {
			srv.send(fmt.Sprintf(`{"id":%s,"result":{"i":%d}}`, ids[i], i))
		}
		for i := range n {
			r := <-calls[i]
			if r.err != nil {
				t.Fatalf("call %d: got error %v", i, r.err)
			}
			if got := r.res["i"]; got != float64(i) {
				t.Errorf("call %d: got result i=%v, want %d", i, got, i)
			}
		}
	})
}

func TestClient_ErrorResponseIsRPCError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, srv := openFake(t, nil)
		defer c.Close()
		done := goCall(c, context.Background(), "nope", nil)
		srv.recv()
		srv.send(`{"id":1,"error":{"code":-32601,"message":"exec-server stub does not implement ` + "`nope`" + ` yet"}}`)
		r := <-done
		var re *harness.RPCError
		if !errors.As(r.err, &re) {
			t.Fatalf("got error %v (%T), want *RPCError", r.err, r.err)
		}
		if re.Code != jsonwire.CodeMethodNotFound || re.Message != "exec-server stub does not implement `nope` yet" {
			t.Errorf("got %+v, want code -32601 and the server's message", re)
		}
	})
}

func TestClient_NotificationsBlockReaderWithoutDropping(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, srv := openFake(t, &harness.Options{NotificationBuffer: 2})
		defer c.Close()
		done := goCall(c, context.Background(), "m", nil)
		srv.recv()
		const n = 6
		sent := make(chan struct{})
		go func() {
			for i := range n {
				srv.send(fmt.Sprintf(`{"method":"process/output","params":{"processId":"p","seq":%d,"stream":"stdout","chunk":"AA=="}}`, i+1))
			}
			srv.send(`{"id":1,"result":{}}`)
			close(sent)
		}()
		synctest.Wait()
		// Buffer 2 + one held by the blocked reader: the sender and the call must both wait.
		select {
		case <-sent:
			t.Fatal("got all messages accepted with a full notification buffer, want the reader blocked")
		case <-done:
			t.Fatal("got the call answered behind undelivered notifications, want it blocked")
		default:
		}
		for i := range n {
			note := <-c.Notifications()
			out, err := note.ProcessOutput()
			if err != nil {
				t.Fatal(err)
			}
			if out.Seq != uint64(i+1) || string(out.Chunk) != "\x00" {
				t.Errorf("notification %d: got seq %d chunk %q, want seq %d chunk \"\\x00\"", i, out.Seq, out.Chunk, i+1)
			}
		}
		<-sent
		if r := <-done; r.err != nil {
			t.Errorf("got error %v, want nil", r.err)
		}
	})
}

func TestClient_OnNotificationReceivesInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cp, sp := newPipe()
		var got []string
		c := harness.Open(cp, &harness.Options{OnNotification: func(n harness.Notification) {
			got = append(got, n.Method)
		}})
		defer c.Close()
		if c.Notifications() != nil {
			t.Error("got a notification channel with OnNotification set, want nil")
		}
		srv := &fakeServer{t, sp}
		srv.send(`{"method":"a"}`)
		srv.send(`{"method":"b","params":{}}`)
		synctest.Wait()
		if fmt.Sprint(got) != "[a b]" {
			t.Errorf("got %v, want [a b]", got)
		}
	})
}

func TestClient_CloseFailsPendingCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cp, sp := newPipe()
		c := harness.Open(cp, nil)
		srv := &fakeServer{t, sp}
		done := goCall(c, context.Background(), "m", nil)
		srv.recv()
		if err := c.Close(); err != nil {
			t.Errorf("got Close error %v, want nil", err)
		}
		if r := <-done; !errors.Is(r.err, harness.ErrClosed) {
			t.Errorf("got pending call error %v, want ErrClosed", r.err)
		}
		if err := c.Call(context.Background(), "m", nil, nil); !errors.Is(err, harness.ErrClosed) {
			t.Errorf("got later call error %v, want ErrClosed", err)
		}
		if _, ok := <-c.Notifications(); ok {
			t.Error("got an open notification channel after Close, want closed")
		}
		if err := c.Err(); err != nil {
			t.Errorf("got Err %v after a plain Close, want nil", err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("got second Close error %v, want nil", err)
		}
	})
}

func TestClient_CancelledCallDropsLateReply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, srv := openFake(t, nil)
		defer c.Close()
		ctx, cancel := context.WithCancel(context.Background())
		done := goCall(c, ctx, "slow", nil)
		srv.recv()
		cancel()
		if r := <-done; !errors.Is(r.err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", r.err)
		}
		srv.send(`{"id":1,"result":{"late":true}}`)
		next := goCall(c, context.Background(), "fast", nil)
		if m := srv.recv(); m.id() != "2" {
			t.Errorf("got id %s, want 2", m.id())
		}
		srv.send(`{"id":2,"result":{"late":false}}`)
		r := <-next
		if r.err != nil || r.res["late"] != false {
			t.Errorf("got (%v, %v), want the second call's own result", r.res, r.err)
		}
	})
}

func TestClient_RefusesServerRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, srv := openFake(t, nil)
		defer c.Close()
		srv.send(`{"id":7,"method":"network/policyRequest","params":{}}`)
		m := srv.recv()
		want := `{"id":7,"error":{"code":-32601,"message":"harness does not handle network/policyRequest"}}`
		if got := string(m.raw); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
}

func TestClient_ProtocolViolationEndsConnection(t *testing.T) {
	tests := []struct{ name, msg string }{
		{"not json", `not-json`},
		{"array", `[]`},
		{"no class", `{"id":1}`},
		{"trailing data", `{"id":1,"result":{}} x`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, srv := openFake(t, nil)
				defer c.Close()
				done := goCall(c, context.Background(), "m", nil)
				srv.recv()
				srv.send(tc.msg)
				<-c.Done()
				if err := c.Err(); !errors.Is(err, harness.ErrProtocol) {
					t.Errorf("got Err %v, want ErrProtocol", err)
				}
				r := <-done
				if !errors.Is(r.err, harness.ErrClosed) || !errors.Is(r.err, harness.ErrProtocol) {
					t.Errorf("got call error %v, want ErrClosed wrapping ErrProtocol", r.err)
				}
			})
		})
	}
}

func TestClient_TransportErrorIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cp, sp := newPipe()
		c := harness.Open(cp, nil)
		defer c.Close()
		sp.Close()
		<-c.Done()
		if err := c.Err(); !errors.Is(err, errPipeClosed) {
			t.Errorf("got Err %v, want the transport's error", err)
		}
	})
}

func TestClient_CloseUnblocksReaderOnFullBuffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cp, sp := newPipe()
		c := harness.Open(cp, &harness.Options{NotificationBuffer: 1})
		srv := &fakeServer{t, sp}
		srv.send(`{"method":"a"}`)
		srv.send(`{"method":"b"}`) // the reader now holds b, blocked on the full channel
		synctest.Wait()
		if err := c.Close(); err != nil {
			t.Errorf("got Close error %v, want nil", err)
		}
		var got []string
		for n := range c.Notifications() {
			got = append(got, n.Method)
		}
		if fmt.Sprint(got) != "[a]" {
			t.Errorf("got buffered notifications %v after Close, want [a]", got)
		}
	})
}
