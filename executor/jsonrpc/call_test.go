package jsonrpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/execlab/executor/executor/executortest"
	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/jsonwire"
)

// rawServe runs a connection over an in-memory pipe and returns the client's raw end;
// cleanup closes the pipe and waits for Run.
func rawServe(t *testing.T, h jsonrpc.Handler) (*executortest.End, *jsonrpc.Conn, *served) {
	t.Helper()
	return rawServeOpts(t, nil, h)
}

// rawServeOpts is rawServe with opts.
func rawServeOpts(t *testing.T, opts *jsonrpc.Options, h jsonrpc.Handler) (*executortest.End, *jsonrpc.Conn, *served) {
	t.Helper()
	a, b := executortest.Pipe()
	conn := jsonrpc.NewConn(b, opts)
	s := &served{done: make(chan struct{})}
	go func() { // ends when the pipe closes
		s.err = conn.Run(context.Background(), h)
		close(s.done)
	}()
	t.Cleanup(func() {
		a.Close()
		<-s.done
	})
	return a, conn, s
}

func readRaw(t *testing.T, end *executortest.End) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := end.ReadMessage(ctx)
	if err != nil {
		t.Fatalf("reading: %v", err)
	}
	return string(b)
}

func writeRaw(t *testing.T, end *executortest.End, msg string) {
	t.Helper()
	if err := end.WriteMessage(context.Background(), []byte(msg)); err != nil {
		t.Fatalf("writing %s: %v", msg, err)
	}
}

// callResult is one Call's outcome, collected from its goroutine.
type callOutcome struct {
	res json.RawMessage
	err error
}

// goCall runs conn.Call in a goroutine owned by the test (it ends when Call returns,
// at the latest when the pipe closes in cleanup).
func goCall(ctx context.Context, conn jsonrpc.ClientCaller, params any) <-chan callOutcome {
	ch := make(chan callOutcome, 1)
	go func() {
		res, err := conn.Call(ctx, "network/policyRequest", params)
		ch <- callOutcome{res, err}
	}()
	return ch
}

func wait(t *testing.T, ch <-chan callOutcome) callOutcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(10 * time.Second):
		t.Fatal("Call did not return")
	}
	return callOutcome{}
}

// TestCall_IDsFromOneRoutedByID: ids count from 1 per connection; the request is
// {"id":N,"method":M,"params":P} with no jsonrpc member (codex 0.171.0's shape); replies
// in any order reach their own calls; an error reply is a *jsonwire.Error.
func TestCall_IDsFromOneRoutedByID(t *testing.T) {
	end, conn, _ := rawServe(t, &fakeHandler{})
	params := map[string]any{"processId": "p", "request": map[string]any{"protocol": "http", "host": "one.invalid", "port": 80}}
	first := goCall(context.Background(), conn, params)
	if got, want := readRaw(t, end), `{"id":1,"method":"network/policyRequest","params":{"processId":"p","request":{"host":"one.invalid","port":80,"protocol":"http"}}}`; got != want {
		t.Fatalf("request = %s, want %s", got, want)
	}
	second := goCall(context.Background(), conn, json.RawMessage(`{"n":2}`))
	if got, want := readRaw(t, end), `{"id":2,"method":"network/policyRequest","params":{"n":2}}`; got != want {
		t.Fatalf("request = %s, want %s", got, want)
	}
	third := goCall(context.Background(), conn, nil)
	if got, want := readRaw(t, end), `{"id":3,"method":"network/policyRequest","params":{}}`; got != want {
		t.Fatalf("request = %s, want %s", got, want)
	}
	writeRaw(t, end, `{"id":2,"result":{"decision":{"type":"deny","reason":"two"}}}`)
	writeRaw(t, end, `{"id":3,"error":{"code":-32000,"message":"nope","data":{"k":1}}}`)
	writeRaw(t, end, `{"result":{"decision":{"type":"allow"}},"id":1}`)
	if o := wait(t, second); o.err != nil || string(o.res) != `{"decision":{"type":"deny","reason":"two"}}` {
		t.Errorf("call 2 = %s, %v; want its own result", o.res, o.err)
	}
	if o := wait(t, first); o.err != nil || string(o.res) != `{"decision":{"type":"allow"}}` {
		t.Errorf("call 1 = %s, %v; want its own result", o.res, o.err)
	}
	o := wait(t, third)
	var rpcErr *jsonwire.Error
	if !errors.As(o.err, &rpcErr) || rpcErr.Code != -32000 || rpcErr.Message != "nope" || string(rpcErr.Data) != `{"k":1}` {
		t.Errorf("call 3 error = %v, want the client's -32000 error", o.err)
	}
	if st := conn.CallStats(); st.InFlight != 0 || st.Issued != 3 || st.Late != 0 {
		t.Errorf("stats = %+v, want 3 issued, none in flight", st)
	}
}

// TestCall_LimitFailsFast: with MaxPendingCalls calls waiting the next one fails at once
// with ErrTooManyCalls and uses no id (0.171.0: 262 callbacks gave ids 1…256 and 6
// immediate denials); once one is answered, the next call gets id 257.
func TestCall_LimitFailsFast(t *testing.T) {
	end, conn, _ := rawServe(t, &fakeHandler{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan string, 2*jsonrpc.MaxPendingCalls)
	var readers sync.WaitGroup
	readers.Add(1)
	go func() { // drains requests until the pipe closes (cleanup)
		defer readers.Done()
		for {
			b, err := end.ReadMessage(context.Background())
			if err != nil {
				return
			}
			seen <- string(b)
		}
	}()
	t.Cleanup(readers.Wait)               // cleanups run last-in first-out:
	t.Cleanup(func() { _ = end.Close() }) // close the pipe, then wait for the reader

	results := make(chan callOutcome, jsonrpc.MaxPendingCalls+1)
	var calls sync.WaitGroup
	for range jsonrpc.MaxPendingCalls + 1 { // the last one starts after a slot frees
		calls.Add(1)
	}
	for range jsonrpc.MaxPendingCalls {
		go func() { // ends when its call is answered or ctx is cancelled below
			defer calls.Done()
			res, err := conn.Call(ctx, "network/policyRequest", nil)
			results <- callOutcome{res, err}
		}()
	}
	for i := 0; i < jsonrpc.MaxPendingCalls; i++ {
		select {
		case <-seen:
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d requests sent, want %d", i, jsonrpc.MaxPendingCalls)
		}
	}
	// Nobody answers and ctx never ends: a call that waited would never return.
	if _, err := conn.Call(context.Background(), "network/policyRequest", nil); !errors.Is(err, jsonrpc.ErrTooManyCalls) {
		t.Fatalf("call %d: err = %v, want ErrTooManyCalls", jsonrpc.MaxPendingCalls+1, err)
	}
	if st := conn.CallStats(); st.InFlight != jsonrpc.MaxPendingCalls || st.Issued != jsonrpc.MaxPendingCalls || st.Rejected != 1 {
		t.Errorf("stats = %+v, want %d in flight and issued, 1 rejected", st, jsonrpc.MaxPendingCalls)
	}
	writeRaw(t, end, `{"id":17,"result":{}}`)
	if o := wait(t, results); o.err != nil {
		t.Fatalf("call 17: %v", o.err)
	}
	go func() { // as above
		defer calls.Done()
		res, err := conn.Call(ctx, "network/policyRequest", nil)
		results <- callOutcome{res, err}
	}()
	select {
	case got := <-seen:
		if !strings.HasPrefix(got, `{"id":257,`) {
			t.Errorf("next request = %s, want id 257", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no request after a slot freed")
	}
	cancel()
	calls.Wait()
}

// TestCall_TimeoutThenLateReplyIgnored: ctx bounds the wait (the proxy passes T + 5 s);
// a reply after it, or a second reply to an answered id, is ignored and the connection
// keeps serving. Virtual time (synctest): no sleeps.
func TestCall_TimeoutThenLateReplyIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		end, conn, _ := rawServe(t, &fakeHandler{})
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond+5*time.Second)
		defer cancel()
		start := time.Now()
		ch := goCall(ctx, conn, nil)
		readRaw(t, end)
		o := <-ch
		if !errors.Is(o.err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want DeadlineExceeded", o.err)
		}
		if d := time.Since(start); d != 6500*time.Millisecond {
			t.Errorf("timed out after %v, want 6.5s", d)
		}
		writeRaw(t, end, `{"id":1,"result":{"late":true}}`)
		ch = goCall(context.Background(), conn, nil)
		if got := readRaw(t, end); !strings.HasPrefix(got, `{"id":2,`) {
			t.Fatalf("second request = %s, want id 2", got)
		}
		writeRaw(t, end, `{"id":2,"result":{"ok":1}}`)
		writeRaw(t, end, `{"id":2,"result":{"ok":"again"}}`)
		if o := <-ch; o.err != nil || string(o.res) != `{"ok":1}` {
			t.Errorf("call 2 = %s, %v; want the first reply", o.res, o.err)
		}
		writeRaw(t, end, `{"id":9,"method":"echo","params":{"still":"open"}}`)
		if got := readRaw(t, end); got != `{"id":9,"result":{"still":"open"}}` {
			t.Errorf("after late replies got %s, want the echo (connection open)", got)
		}
		if st := conn.CallStats(); st.Late != 2 || st.InFlight != 0 {
			t.Errorf("stats = %+v, want 2 late replies, none in flight", st)
		}
		if _, err := conn.Call(ctx, "m", nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Call with an expired ctx: %v, want DeadlineExceeded", err)
		}
		if st := conn.CallStats(); st.Issued != 2 {
			t.Errorf("Call with an expired ctx used an id: %d issued, want 2", st.Issued)
		}
	})
}

// TestCall_ReplyToUnissuedIDCloses: a reply whose id this connection never issued closes
// it without a reply, as 0.171.0 does (probed: 77, 0, a future id and the string "1"
// while id 1 was pending), and the pending call fails with ErrConnClosed.
func TestCall_ReplyToUnissuedIDCloses(t *testing.T) {
	for _, reply := range []string{
		`{"id":77,"result":{}}`,
		`{"id":0,"result":{}}`,
		`{"id":2,"result":{}}`,
		`{"id":-1,"result":{}}`,
		`{"id":"1","result":{}}`,
		`{"id":77,"error":{"code":-32000,"message":"x"}}`,
		`{"id":"1","error":{"code":-32000,"message":"x"}}`,
	} {
		t.Run(reply, func(t *testing.T) {
			end, conn, s := rawServe(t, &fakeHandler{})
			ch := goCall(context.Background(), conn, nil)
			readRaw(t, end)
			writeRaw(t, end, reply)
			if o := wait(t, ch); !errors.Is(o.err, jsonrpc.ErrConnClosed) {
				t.Errorf("pending call err = %v, want ErrConnClosed", o.err)
			}
			select {
			case <-s.done:
			case <-time.After(10 * time.Second):
				t.Fatal("connection still running")
			}
			if s.err != nil {
				t.Errorf("Run = %v, want nil (closed by rule)", s.err)
			}
			if _, err := conn.Call(context.Background(), "m", nil); !errors.Is(err, jsonrpc.ErrConnClosed) {
				t.Errorf("Call after close: %v, want ErrConnClosed", err)
			}
		})
	}
}

// TestCall_DisconnectFailsEveryPendingCall: when the client goes, every pending call
// fails at once with ErrConnClosed (0.171.0: the proxied request was denied as the socket
// closed), and later calls fail the same way without waiting.
func TestCall_DisconnectFailsEveryPendingCall(t *testing.T) {
	end, conn, s := rawServe(t, &fakeHandler{})
	var outs []<-chan callOutcome
	for i := 0; i < 5; i++ {
		outs = append(outs, goCall(context.Background(), conn, nil))
		readRaw(t, end)
	}
	end.Close()
	for i, ch := range outs {
		if o := wait(t, ch); !errors.Is(o.err, jsonrpc.ErrConnClosed) {
			t.Errorf("call %d: err = %v, want ErrConnClosed", i+1, o.err)
		}
	}
	<-s.done
	if _, err := conn.Call(context.Background(), "m", nil); !errors.Is(err, jsonrpc.ErrConnClosed) {
		t.Errorf("Call after disconnect: %v, want ErrConnClosed", err)
	}
	if err := conn.NotifyBestEffort("m", nil); !errors.Is(err, jsonrpc.ErrConnClosed) {
		t.Errorf("NotifyBestEffort after disconnect: %v, want ErrConnClosed", err)
	}
}

// TestNotifyBestEffort_DropsUnderSlowReader: with a client that reads nothing, best-effort
// notifications fill the outbound queue only up to BestEffortReserve free slots, then are
// dropped and counted without waiting; the reserved slots still take control
// notifications at once, and once the client reads, everything queued arrives in order.
func TestNotifyBestEffort_DropsUnderSlowReader(t *testing.T) {
	end, conn, _ := rawServe(t, &fakeHandler{})
	const audits = 1000 // nobody reads: a NotifyBestEffort that waited would never return
	var accepted []int
	for i := 0; i < audits; i++ {
		err := conn.NotifyBestEffort("network/policyDecision", map[string]int{"n": i})
		switch {
		case err == nil:
			accepted = append(accepted, i)
		case !errors.Is(err, jsonrpc.ErrDropped):
			t.Fatalf("audit %d: %v", i, err)
		}
	}
	sent := len(accepted)
	// Pipe buffer + the one being written + the queue up to the reserve.
	if max := executortest.Buffer + 1 + jsonrpc.OutboundQueue - jsonrpc.BestEffortReserve; sent > max || sent < jsonrpc.OutboundQueue-jsonrpc.BestEffortReserve {
		t.Errorf("%d audits queued, want at most %d", sent, max)
	}
	if st := conn.CallStats(); st.Dropped != uint64(audits-sent) {
		t.Errorf("Dropped = %d, want %d", st.Dropped, audits-sent)
	}
	for i := 0; i < jsonrpc.BestEffortReserve-1; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := conn.Notify(ctx, "process/output", map[string]int{"seq": i})
		cancel()
		if err != nil {
			t.Fatalf("control notification %d with the audit reserve spent: %v (delayed)", i, err)
		}
	}
	for i, n := range accepted {
		if got, want := readRaw(t, end), fmt.Sprintf(`{"method":"network/policyDecision","params":{"n":%d}}`, n); got != want {
			t.Fatalf("message %d = %s, want %s", i, got, want)
		}
	}
	if got := readRaw(t, end); got != `{"method":"process/output","params":{"seq":0}}` {
		t.Fatalf("after the audits got %s, want the first control notification", got)
	}
}

// TestNotifyBestEffort_ByteReserve: large best-effort notifications stop at the byte
// budget minus BestEffortReserveBytes, leaving room for a reply.
func TestNotifyBestEffort_ByteReserve(t *testing.T) {
	end, conn, _ := rawServe(t, &fakeHandler{})
	big := strings.Repeat("x", 256<<10)
	const n = 200 // well beyond the pipe's buffer and the byte budget
	sent := 0
	for i := 0; i < n; i++ {
		if conn.NotifyBestEffort("audit", map[string]string{"pad": big}) == nil {
			sent++
		}
	}
	if budget := (jsonrpc.OutboundBytes - jsonrpc.BestEffortReserveBytes) / len(big); sent > executortest.Buffer+1+budget {
		t.Errorf("%d large audits queued, want about %d", sent, budget)
	}
	if sent == n {
		t.Fatal("no large audit dropped")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := conn.Notify(ctx, "process/output", map[string]string{"pad": strings.Repeat("y", 256<<10)}); err != nil {
		t.Fatalf("control notification after large audits: %v (delayed)", err)
	}
	for i := 0; i < sent; i++ {
		readRaw(t, end)
	}
	if got := readRaw(t, end); !strings.HasPrefix(got, `{"method":"process/output"`) {
		t.Fatalf("got %.40s, want the control notification", got)
	}
}

// TestClientLink_FollowsAttachedConn: with no connection attached the link fails with
// ErrNoClient; it reaches the attached one; Detach of a connection no longer current
// leaves the current one attached.
func TestClientLink_FollowsAttachedConn(t *testing.T) {
	var link jsonrpc.ClientLink
	if _, err := link.Call(context.Background(), "m", nil); !errors.Is(err, jsonrpc.ErrNoClient) {
		t.Fatalf("Call with nothing attached: %v, want ErrNoClient", err)
	}
	if err := link.NotifyBestEffort("m", nil); !errors.Is(err, jsonrpc.ErrNoClient) {
		t.Fatalf("NotifyBestEffort with nothing attached: %v, want ErrNoClient", err)
	}
	oldEnd, old, _ := rawServe(t, &fakeHandler{})
	end, conn, _ := rawServe(t, &fakeHandler{})
	link.Attach(old)
	link.Attach(conn)
	link.Detach(old)
	ch := goCall(context.Background(), &link, nil)
	if got := readRaw(t, end); got != `{"id":1,"method":"network/policyRequest","params":{}}` {
		t.Fatalf("request on the current conn = %s", got)
	}
	writeRaw(t, end, `{"id":1,"result":{"ok":true}}`)
	if o := wait(t, ch); o.err != nil || string(o.res) != `{"ok":true}` {
		t.Fatalf("Call = %s, %v", o.res, o.err)
	}
	if err := link.NotifyBestEffort("audit", nil); err != nil {
		t.Fatal(err)
	}
	if got := readRaw(t, end); got != `{"method":"audit","params":{}}` {
		t.Fatalf("notification = %s", got)
	}
	link.Detach(conn)
	if _, err := link.Call(context.Background(), "m", nil); !errors.Is(err, jsonrpc.ErrNoClient) {
		t.Fatalf("Call after Detach: %v, want ErrNoClient", err)
	}
	if st := old.CallStats(); st.Issued != 0 {
		t.Errorf("old conn issued %d ids, want 0", st.Issued)
	}
	_ = oldEnd
}

// BenchmarkCall is one server→client request and its reply over an in-memory pipe, with
// a client that answers every request at once.
func BenchmarkCall(b *testing.B) {
	a, srv := executortest.Pipe()
	conn := jsonrpc.NewConn(srv, nil)
	done := make(chan struct{})
	go func() { // ends when the pipe closes below
		defer close(done)
		_ = conn.Run(context.Background(), &fakeHandler{})
	}()
	answered := make(chan struct{})
	go func() { // the client: echoes each request's id with a fixed decision
		defer close(answered)
		for {
			msg, err := a.ReadMessage(context.Background())
			if err != nil {
				return
			}
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal(msg, &m)
			if a.WriteMessage(context.Background(), []byte(`{"id":`+string(m.ID)+`,"result":{"decision":{"type":"allow"}}}`)) != nil {
				return
			}
		}
	}()
	params := map[string]any{"processId": "p", "request": map[string]any{"protocol": "http", "host": "h.invalid", "port": 80}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := conn.Call(context.Background(), "network/policyRequest", params); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	a.Close()
	<-done
	<-answered
}

// countingObserver counts the server→client events of a CallObserver.
type countingObserver struct {
	mu               sync.Mutex
	dropped, refused int
}

func (*countingObserver) Backpressure(string, time.Duration) {}
func (o *countingObserver) BestEffortDropped() {
	o.mu.Lock()
	o.dropped++
	o.mu.Unlock()
}
func (o *countingObserver) CallRefused() {
	o.mu.Lock()
	o.refused++
	o.mu.Unlock()
}

// TestCallObserver_CountsDropsAndRefusals: an Observer that is also a CallObserver hears
// of every dropped best-effort notification and every call refused at the cap. The
// connection is not running, so nothing drains its queue (synctest: the blocked calls
// are waited for, not polled).
func TestCallObserver_CountsDropsAndRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		obs := &countingObserver{}
		_, b := executortest.Pipe()
		conn := jsonrpc.NewConn(b, &jsonrpc.Options{Observer: obs})
		for i := 0; i < jsonrpc.OutboundQueue; i++ {
			_ = conn.NotifyBestEffort("audit", nil)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var calls sync.WaitGroup
		for range jsonrpc.MaxPendingCalls {
			calls.Add(1)
			go func() { // blocks in the full queue until cancel
				defer calls.Done()
				_, _ = conn.Call(ctx, "m", nil)
			}()
		}
		synctest.Wait()
		if _, err := conn.Call(ctx, "m", nil); !errors.Is(err, jsonrpc.ErrTooManyCalls) {
			t.Errorf("call beyond the cap: %v, want ErrTooManyCalls", err)
		}
		cancel()
		calls.Wait()
		want := jsonrpc.BestEffortReserve
		if obs.dropped != want || obs.refused != 1 {
			t.Errorf("observer saw %d drops and %d refusals, want %d and 1", obs.dropped, obs.refused, want)
		}
		if st := conn.CallStats(); st.Dropped != uint64(want) || st.Rejected != 1 || st.InFlight != 0 {
			t.Errorf("stats = %+v", st)
		}
	})
}
