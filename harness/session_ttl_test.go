package harness

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"
)

// scriptedConn answers initialize with a fixed environmentInfo and swallows everything
// else; it is the one physical connection of a sessionConn.
type scriptedConn struct {
	info  string
	out   chan []byte
	close chan struct{}
}

func (c *scriptedConn) ReadMessage(ctx context.Context) ([]byte, error) {
	select {
	case m := <-c.out:
		return m, nil
	case <-c.close:
		return nil, errors.New("closed")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *scriptedConn) WriteMessage(_ context.Context, msg []byte) error {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(msg, &req) == nil && req.Method == "initialize" {
		c.out <- []byte(`{"id":` + string(req.ID) + `,"result":{"sessionId":"s","environmentInfo":` + c.info + `}}`)
	}
	return nil
}

func (c *scriptedConn) Close() error {
	select {
	case <-c.close:
	default:
		close(c.close)
	}
	return nil
}

// TestInitialize_SessionTTLBoundsRecovery: our executor's sessionTtlMs shortens the
// recovery window to the TTL plus sessionTTLSlack when that is shorter; a longer TTL, none
// (a released executor) or an absurd one leave the window as configured.
func TestInitialize_SessionTTLBoundsRecovery(t *testing.T) {
	const window = 10 * time.Minute
	tests := []struct {
		name string
		info string
		want time.Duration
	}{
		{"short ttl", `{"sessionTtlMs":60000}`, time.Minute + sessionTTLSlack},
		{"ttl past the window", `{"sessionTtlMs":900000}`, window},
		{"released executor", `{"capabilities":{}}`, window},
		{"overflowing ttl", `{"sessionTtlMs":18446744073709551615}`, window},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := &scriptedConn{info: tt.info, out: make(chan []byte, 1), close: make(chan struct{})}
			sc := &sessionConn{
				dial:    func(context.Context) (MessageConn, error) { return nil, errors.New("no redial") },
				timeout: window, log: slog.New(slog.DiscardHandler), wsem: make(chan struct{}, 1), cur: conn,
				inflight: map[string]*inflightReq{}, procs: map[string]*procState{},
			}
			sc.acks = newOutputAcks()
			c := openClient(sc, nil, sc.acks)
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := c.Initialize(ctx, "t", ""); err != nil {
				t.Fatalf("Initialize: %v", err)
			}
			sc.mu.Lock()
			got := sc.timeout
			sc.mu.Unlock()
			if got != tt.want {
				t.Errorf("recovery window %v, want %v", got, tt.want)
			}
		})
	}
}
