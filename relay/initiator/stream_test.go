package initiator

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/relay/frame"
)

// relayPeer serves one websocket that sends the given messages, then waits.
func relayPeer(t *testing.T, msgs []func(*websocket.Conn) error) *Stream {
	t.Helper()
	rc, _ := scriptedPeer(t, false, func(_ context.Context, c *websocket.Conn) error {
		for _, m := range msgs {
			if err := m(c); err != nil {
				return err
			}
		}
		return nil
	})
	return rc
}

// TestStream_HarnessRules checks spec/relay-noise.md §13 on the harness side.
func TestStream_HarnessRules(t *testing.T) {
	hs := binFrame("s-1", &frame.Handshake{Payload: []byte("msg2")})
	tests := []struct {
		name    string
		msgs    []func(*websocket.Conn) error
		reads   int   // successful reads expected before the error
		wantErr error // nil: just check reads
	}{
		{"other streams and resume/ack/heartbeat are ignored", []func(*websocket.Conn) error{
			binFrame("other", &frame.Data{SegmentCount: 1, Payload: []byte{1}}),
			binFrame("s-1", &frame.Resume{}), binFrame("s-1", &frame.Ack{}), binFrame("s-1", &frame.Heartbeat{}),
			hs, binFrame("s-1", &frame.Data{Seq: 0, SegmentCount: 1, Payload: []byte{2}}),
		}, 2, nil},
		{"reset fails with the fixed reason", []func(*websocket.Conn) error{hs, binFrame("s-1", &frame.Reset{Reason: "peer text"})}, 1, ErrStreamReset},
		{"text message fails", []func(*websocket.Conn) error{func(c *websocket.Conn) error {
			return c.Write(context.Background(), websocket.MessageText, []byte("{}"))
		}}, 0, errTextFrame},
		{"second handshake fails", []func(*websocket.Conn) error{hs, hs}, 1, errHandshakeInTransport},
		{"invalid frame fails", []func(*websocket.Conn) error{binFrame("s-1", &frame.Data{SegmentCount: 2, Payload: []byte{1}})}, 0, frame.ErrDataMissingFields},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := relayPeer(t, tt.msgs)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			for i := range tt.reads {
				if _, err := rc.ReadPacket(ctx); err != nil {
					t.Fatalf("read %d: %v", i, err)
				}
			}
			if tt.wantErr == nil {
				return
			}
			_, err := rc.ReadPacket(ctx)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("got %v, want %v", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "peer text") {
				t.Errorf("error carries the peer's reset reason: %v", err)
			}
		})
	}
}
