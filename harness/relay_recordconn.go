package harness

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/execlab/executor/noise/channel"
	"github.com/execlab/executor/relay/frame"
	"github.com/execlab/executor/relay/wsconn"
)

// Harness-side relay errors (spec/relay-noise.md §13, the reference's texts).
var (
	// ErrStreamReset: the executor (or the rendezvous for it) reset this stream. The peer's
	// reason is unauthenticated and discarded.
	ErrStreamReset = errors.New("Noise relay stream reset")
	// errTextFrame: a text websocket message arrived on the relay socket.
	errTextFrame = errors.New("Noise relay transport expects binary protobuf frames")
	// errHandshakeInTransport: a handshake frame after the handshake completed.
	errHandshakeInTransport = errors.New("Noise relay received a handshake frame after the handshake")
)

// relayRecordConn is one harness stream over its own rendezvous socket: it implements
// channel.RecordConn with the harness's per-frame rules (spec/relay-noise.md §13): frames of
// other streams and resume/ack_frame/heartbeat are ignored; text messages, undecodable or
// invalid frames, a reset, or a handshake after the first one fail the stream. It owns the
// socket's keepalive goroutine (RemoteOptions.Conn: by default Ping 10 s / Pong 20 s), waited for by Close.
type relayRecordConn struct {
	ws       *wsconn.Conn
	streamID string

	wbuf []byte // WritePacket's encode buffer; one writer at a time
	// traceparent goes in cleartext field 11 of the handshake frame ("" = none: the
	// default, byte-identical to the reference). Set before the handshake starts.
	traceparent string
	handshakes  int // handshake frames read; ReadPacket runs on one goroutine at a time

	cancelKeepalive context.CancelFunc
	keepaliveDone   chan struct{}
	closeOnce       sync.Once
}

var _ channel.RecordConn = (*relayRecordConn)(nil)

// newRelayRecordConn takes ownership of ws and starts its keepalive.
func newRelayRecordConn(ws *wsconn.Conn, streamID string) *relayRecordConn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &relayRecordConn{ws: ws, streamID: streamID, cancelKeepalive: cancel, keepaliveDone: make(chan struct{})}
	go c.keepalive(ctx)
	return c
}

// keepalive pings the rendezvous until the socket ends. Owner: the relayRecordConn.
func (c *relayRecordConn) keepalive(ctx context.Context) {
	defer close(c.keepaliveDone)
	_ = c.ws.Keepalive(ctx) // a missing Pong drops the socket; ReadPacket then fails
}

// writeFrame encodes and sends one frame of this stream.
func (c *relayRecordConn) writeFrame(ctx context.Context, body frame.Body) error {
	f := frame.Frame{Version: frame.Version, StreamID: c.streamID, Body: body}
	if _, ok := body.(*frame.Handshake); ok {
		f.Traceparent = c.traceparent
	}
	b, err := frame.Encode(c.wbuf[:0], &f)
	if err != nil {
		return fmt.Errorf("encoding %s frame: %w", frame.KindOf(body), err)
	}
	c.wbuf = b
	if err := c.ws.WriteFrame(ctx, b); err != nil {
		return fmt.Errorf("writing %s frame: %w", frame.KindOf(body), err)
	}
	return nil
}

// WritePacket sends a handshake or data frame.
func (c *relayRecordConn) WritePacket(ctx context.Context, p channel.Packet) error {
	if p.Handshake {
		return c.writeFrame(ctx, &frame.Handshake{Payload: p.Payload})
	}
	return c.writeFrame(ctx, &frame.Data{Seq: p.Seq, SegmentCount: frame.DataSegmentCount, Payload: p.Payload})
}

// ReadPacket returns the next handshake or data packet of this stream.
func (c *relayRecordConn) ReadPacket(ctx context.Context) (channel.Packet, error) {
	for {
		b, err := c.ws.ReadFrame(ctx)
		if errors.Is(err, frame.ErrNonBinary) {
			return channel.Packet{}, errTextFrame
		}
		if err != nil {
			return channel.Packet{}, fmt.Errorf("reading relay frame: %w", err)
		}
		var f frame.Frame // fresh: the returned payload aliases b, which the channel keeps
		if err := frame.Decode(&f, b); err != nil {
			return channel.Packet{}, fmt.Errorf("decoding relay frame: %w", err)
		}
		if err := f.Validate(); err != nil {
			return channel.Packet{}, fmt.Errorf("validating relay frame: %w", err)
		}
		if f.StreamID != c.streamID {
			continue
		}
		switch body := f.Body.(type) {
		case *frame.Handshake:
			c.handshakes++
			if c.handshakes > 1 {
				return channel.Packet{}, errHandshakeInTransport
			}
			return channel.Packet{Handshake: true, Payload: body.Payload}, nil
		case *frame.Data:
			return channel.Packet{Seq: body.Seq, Payload: body.Payload}, nil
		case *frame.Reset:
			return channel.Packet{}, ErrStreamReset
		case *frame.Resume, *frame.Ack, *frame.Heartbeat:
			continue
		default:
			return channel.Packet{}, fmt.Errorf("unexpected relay frame body %s", frame.KindOf(body))
		}
	}
}

// Close drops the socket (no close frame, like the reference harness) and waits for the
// keepalive goroutine.
func (c *relayRecordConn) Close() error {
	c.closeOnce.Do(func() {
		c.cancelKeepalive()
		_ = c.ws.Close()
		<-c.keepaliveDone
	})
	return nil
}
