package jsonrpc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/execlab/executor/executor/executortest"
	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/jsonwire"
)

// arrivingConn shows each message to seen in pieces of step bytes before returning it, as
// internal/wsmsg does with the reads of a large WebSocket message.
type arrivingConn struct {
	*executortest.End
	step int
}

func (c *arrivingConn) ReadMessageArriving(ctx context.Context, seen func([]byte)) ([]byte, error) {
	b, err := c.End.ReadMessage(ctx)
	if err != nil {
		return nil, err
	}
	for n := c.step; n < len(b); n += c.step {
		seen(b[:n])
	}
	return b, nil
}

// recordingArrival claims the body of the string "KNOWN…" of each message and hands over
// the text it saw last as the early value.
type recordingArrival struct {
	mu      sync.Mutex
	seen    int
	arrived []string
}

func (a *recordingArrival) Seen(sofar []byte) {
	a.mu.Lock()
	a.seen++
	a.mu.Unlock()
}

func (a *recordingArrival) Arrived(data []byte) (jsonwire.KnownString, any, int) {
	a.mu.Lock()
	a.arrived = append(a.arrived, string(data))
	a.mu.Unlock()
	i := bytes.Index(data, []byte(`"KNOWN`))
	if i < 0 {
		return jsonwire.KnownString{}, nil, 0
	}
	end := i + 1 + bytes.IndexByte(data[i+1:], '"')
	return jsonwire.KnownString{Start: i + 1, End: end}, "early:" + string(data[i+1:end]), end - i
}

// earlyHandler is fakeHandler that answers "early" with the Message's Early value.
type earlyHandler struct {
	fakeHandler
	arrival *recordingArrival
}

func (h *earlyHandler) Arrival() jsonrpc.Arrival { return h.arrival }

func (h *earlyHandler) Handle(ctx context.Context, req *jsonrpc.Message) (any, error) {
	if req.Method == "early" {
		k := req.ParamsKnown()
		return map[string]any{"early": req.Early, "params": json.RawMessage(req.Params), "known": string(req.Params[k.Start:k.End])}, nil
	}
	return h.fakeHandler.Handle(ctx, req)
}

// TestConn_ArrivalSeesMessagesAndHandsOverEarly: with an ArrivingReader transport and an
// EarlyDecoder handler, the read loop shows every message to the Arrival while it
// arrives, the Arrival's value reaches Handle as Message.Early, and a message whose
// claimed string is not valid where the scan enters it still gets Parse's own error.
func TestConn_ArrivalSeesMessagesAndHandsOverEarly(t *testing.T) {
	a, b := executortest.Pipe()
	h := &earlyHandler{fakeHandler: fakeHandler{release: make(chan struct{})}, arrival: &recordingArrival{}}
	conn := jsonrpc.NewConn(&arrivingConn{End: b, step: 1000}, nil)
	done := make(chan error, 1)
	go func() { done <- conn.Run(context.Background(), h) }()
	defer func() { a.Close(); <-done }()
	c := executortest.NewClient(t, a)

	long := "KNOWN" + strings.Repeat("QUJD", 2000)
	c.Send(`{"id":1,"method":"early","params":{"chunk":"` + long + `"}}`)
	m := c.Recv()
	res, _ := m["result"].(map[string]any)
	if res == nil {
		t.Fatalf("no result: %.300v", m)
	}
	if res["early"] != "early:"+long {
		t.Fatalf("Early = %.40v, want the Arrival's value", res["early"])
	}
	if p, _ := res["params"].(map[string]any); p["chunk"] != long {
		t.Fatalf("params = %.60v", res["params"])
	}
	if k, _ := res["known"].(string); k != long {
		t.Fatalf("ParamsKnown names %.40q, want the claimed string's body", k)
	}
	// A message without the string: no Early.
	c.Send(`{"id":2,"method":"early","params":{}}`)
	if res, _ := c.Recv()["result"].(map[string]any); res["early"] != nil {
		t.Fatalf("Early = %v for a message the Arrival did not claim", res["early"])
	}
	// Malformed JSON after the claimed string: Parse still reports it.
	c.Send(`{"id":3,"method":"early","params":{"chunk":"` + long + `"}`)
	if e, _ := c.Recv()["error"].(map[string]any); e == nil || !strings.Contains(e["message"].(string), "EOF while parsing") {
		t.Fatalf("truncated message: got %v, want the parse error", e)
	}
	h.arrival.mu.Lock()
	defer h.arrival.mu.Unlock()
	if len(h.arrival.arrived) != 3 || h.arrival.seen < 2*(len(long)/1000) {
		t.Fatalf("Arrival saw %d messages and %d partial reads", len(h.arrival.arrived), h.arrival.seen)
	}
}
