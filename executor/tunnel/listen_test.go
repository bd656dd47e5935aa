package tunnel

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/execlab/executor/executor/protocol"
)

// acceptRecorder records tunnel/accepted params.
type acceptRecorder struct {
	recorder
	amu      sync.Mutex
	accepted []protocol.TunnelAcceptedParams
	got      chan struct{}
}

func (r *acceptRecorder) Notify(ctx context.Context, method string, params any) error {
	if p, ok := params.(*protocol.TunnelAcceptedParams); ok {
		r.amu.Lock()
		r.accepted = append(r.accepted, *p)
		r.amu.Unlock()
		r.got <- struct{}{}
	}
	return r.recorder.Notify(ctx, method, params)
}

type countObserver struct {
	mu     sync.Mutex
	events map[string]int
}

func (o *countObserver) TunnelOpened(string) {}
func (o *countObserver) TunnelListenEvent(ev string) {
	o.mu.Lock()
	o.events[ev]++
	o.mu.Unlock()
}

func TestTable_Listen(t *testing.T) {
	rec := &acceptRecorder{got: make(chan struct{}, 8)}
	obs := &countObserver{events: map[string]int{}}
	tb := NewTable(rec, &Options{Observer: obs})
	defer tb.Close()
	ctx := context.Background()

	if res, start := tb.Listen(ctx, &protocol.TunnelListenParams{ListenerID: 1, Host: "0.0.0.0", Port: 0}); res.Status != protocol.TunnelRefused || start != nil {
		t.Fatalf("wildcard bind under the default policy: %+v", res)
	}
	res, start := tb.Listen(ctx, &protocol.TunnelListenParams{ListenerID: 1, Host: "127.0.0.1", Port: 0, Window: 1 << 20})
	if res.Status != protocol.TunnelListening || res.Port == 0 || start == nil {
		t.Fatalf("listen: %+v", res)
	}
	start()
	if dup, _ := tb.Listen(ctx, &protocol.TunnelListenParams{ListenerID: 1, Host: "127.0.0.1"}); dup.Status != protocol.TunnelListenerInUse {
		t.Fatalf("same listenerId: %+v", dup)
	}
	// A client-chosen id at the base is skipped by the executor's choice.
	a0, b0 := net.Pipe()
	defer b0.Close()
	tb.mu.Lock()
	tb.conns[protocol.TunnelAcceptedIDBase] = newConn(tb, protocol.TunnelAcceptedIDBase, a0, 1, 1)
	tb.mu.Unlock()

	addr := fmt.Sprintf("127.0.0.1:%d", res.Port)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-rec.got:
	case <-time.After(10 * time.Second):
		t.Fatal("no tunnel/accepted")
	}
	rec.amu.Lock()
	acc := rec.accepted[0]
	rec.amu.Unlock()
	if acc.ListenerID != 1 || acc.ConnID != protocol.TunnelAcceptedIDBase+1 || acc.Window != DefaultWindow || acc.Peer != c.LocalAddr().String() {
		t.Fatalf("accepted %+v (peer want %s)", acc, c.LocalAddr())
	}
	// The data path is tunnel/open's: the peer's data reaches the socket.
	tb.HandleNotification(protocol.MethodTunnelData, json.RawMessage(fmt.Sprintf(`{"connId":%d,"data":"aGk="}`, acc.ConnID)))
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 2)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "hi" {
		t.Fatalf("read %q, %v", buf, err)
	}

	if r := tb.Unlisten(&protocol.TunnelUnlistenParams{ListenerID: 1}); !r.Closed {
		t.Fatal("unlisten: not closed")
	}
	if r := tb.Unlisten(&protocol.TunnelUnlistenParams{ListenerID: 1}); r.Closed {
		t.Fatal("second unlisten: closed")
	}
	if c2, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c2.Close()
		t.Fatal("listener still accepts after unlisten")
	}
	// The accepted connection outlives its listener.
	if tb.Len() != 2 {
		t.Fatalf("Len = %d, want 2", tb.Len())
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if obs.events[ListenEventListening] != 1 || obs.events[ListenEventRefused] != 1 || obs.events[ListenEventFailed] != 1 || obs.events[ListenEventAccepted] != 1 {
		t.Fatalf("events %v", obs.events)
	}
}

// Close closes the listeners: the port is free again.
func TestTable_CloseClosesListeners(t *testing.T) {
	tb := NewTable(&recorder{}, nil)
	res, start := tb.Listen(context.Background(), &protocol.TunnelListenParams{ListenerID: 9, Host: "127.0.0.1"})
	if res.Status != protocol.TunnelListening {
		t.Fatalf("listen: %+v", res)
	}
	start()
	tb.Close()
	if tb.Listeners() != 0 {
		t.Fatal("listeners after Close")
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", res.Port))
	if err != nil {
		t.Fatalf("port not free after Close: %v", err)
	}
	ln.Close()
	if res, _ := tb.Listen(context.Background(), &protocol.TunnelListenParams{ListenerID: 10, Host: "127.0.0.1"}); res.Status != protocol.TunnelFailed {
		t.Fatalf("listen after Close: %+v", res)
	}
}
