package tunnel

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/execlab/executor/executor/protocol"
)

// recorder is a Notifier that records methods.
type recorder struct {
	mu      sync.Mutex
	methods []string
	data    []byte
}

func (r *recorder) Notify(_ context.Context, method string, params any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.methods = append(r.methods, method)
	if p, ok := params.(*protocol.TunnelDataParams); ok {
		r.data = append(r.data, p.Data...)
	}
	return nil
}

func TestTable_OpenRefusedAndUnknownIDs(t *testing.T) {
	tb := NewTable(&recorder{}, nil)
	defer tb.Close()
	res, start := tb.Open(context.Background(), &protocol.TunnelOpenParams{ConnID: 1, Host: "192.0.2.1", Port: 80})
	if res.Status != protocol.TunnelRefused || start != nil {
		t.Fatalf("got %+v, want refused", res)
	}
	for _, m := range []string{protocol.MethodTunnelData, protocol.MethodTunnelAck, protocol.MethodTunnelEOF, protocol.MethodTunnelClose} {
		if !tb.HandleNotification(m, json.RawMessage(`{"connId":7,"data":"","bytes":1}`)) {
			t.Errorf("%s for an unknown id not taken", m)
		}
	}
	if tb.HandleNotification(protocol.MethodTunnelData, json.RawMessage(`{"connId":"x"}`)) {
		t.Error("undecodable params taken")
	}
}

// The window bounds what the table buffers: data beyond it resets the connection.
func TestTable_WindowExceededResets(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	rec := &recorder{}
	tb := NewTable(rec, &Options{Window: 8, Dial: func(context.Context, string, string) (net.Conn, error) { return a, nil }})
	res, start := tb.Open(context.Background(), &protocol.TunnelOpenParams{ConnID: 1, Host: "127.0.0.1", Port: 1, Window: 1})
	if res.Status != protocol.TunnelOpened {
		t.Fatalf("open: %+v", res)
	}
	// Not started: nothing drains, so the buffer fills.
	tb.HandleNotification(protocol.MethodTunnelData, json.RawMessage(`{"connId":1,"data":"MTIzNDU2Nzg="}`)) // 8 bytes
	if tb.Len() != 1 {
		t.Fatal("reset within the window")
	}
	tb.HandleNotification(protocol.MethodTunnelData, json.RawMessage(`{"connId":1,"data":"OQ=="}`))
	if tb.Len() != 0 {
		t.Fatal("data beyond the window did not reset the connection")
	}
	start()
	tb.Close()
	if _, err := b.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("socket after reset: %v, want EOF (closed)", err)
	}
}

func FuzzHandleNotification(f *testing.F) {
	for _, s := range []string{`{"connId":1,"data":"aGk="}`, `{"connId":1,"bytes":5}`, `{"connId":1}`, `{"connId":1,"reason":"x"}`, `{}`, `null`, `{"connId":-1}`} {
		for _, m := range []string{protocol.MethodTunnelData, protocol.MethodTunnelAck, protocol.MethodTunnelEOF, protocol.MethodTunnelClose} {
			f.Add(m, s)
		}
	}
	f.Fuzz(func(t *testing.T, method, params string) {
		a, b := net.Pipe()
		defer b.Close()
		tb := NewTable(&recorder{}, &Options{Dial: func(context.Context, string, string) (net.Conn, error) { return a, nil }})
		if res, start := tb.Open(context.Background(), &protocol.TunnelOpenParams{ConnID: 1, Host: "127.0.0.1", Port: 1}); start != nil {
			_ = res
			start()
		}
		tb.HandleNotification(method, json.RawMessage(params))
		tb.Close()
	})
}
