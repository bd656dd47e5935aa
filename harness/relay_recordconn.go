package harness

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/execlab/executor/noise/channel"
	"github.com/execlab/executor/relay/arq"
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
	// errReorderStall: on a stream without ARQ (a released executor) a record has been
	// missing for reorderStallTimeout while later ones wait: a faulty rendezvous lost it and
	// nothing will resend it, so the stream is given up and session recovery takes over.
	errReorderStall = errors.New("Noise relay record missing: giving up the stream")
)

// reorderStallTimeout bounds how long a non-ARQ stream waits for a missing record while
// later ones are buffered (docs/reliability.md §8). A websocket delivers in order, so a gap
// only comes from a faulty rendezvous; 2 s is 200 times the chaos proxy's reorder hold.
const reorderStallTimeout = 2 * time.Second

// reorderStallGrace is the least time a read gets after the stall bound passed while
// nobody was reading: the missing record may be waiting in the socket.
const reorderStallGrace = 250 * time.Millisecond

// relayRecordConn is one harness stream over its own rendezvous socket: it implements
// channel.RecordConn with the harness's per-frame rules (spec/relay-noise.md §13): frames of
// other streams and resume/ack_frame/heartbeat are ignored; text messages, undecodable or
// invalid frames, a reset, or a handshake after the first one fail the stream. It owns the
// socket's keepalive goroutine (RemoteOptions.Conn: by default Ping 10 s / Pong 20 s), waited for by Close.
type relayRecordConn struct {
	ws       *wsconn.Conn
	streamID string

	// wmu serialises socket writes (WritePacket, and with ARQ the timer routine) and
	// guards wbuf, the encode buffer.
	wmu  sync.Mutex
	wbuf []byte
	// traceparent goes in cleartext field 11 of the handshake frame ("" = none: the
	// default, byte-identical to the reference). Set before the handshake starts.
	traceparent string
	// offerARQ sets frame.FeatureARQ on the handshake frame (RemoteOptions.DisableARQ
	// false). Set before the handshake starts.
	offerARQ   bool
	handshakes int // handshake frames read; ReadPacket runs on one goroutine at a time
	// arq is set when message 2 accepted ARQ (relay_arq.go); then ReadPacket and
	// WritePacket go through it.
	arq atomic.Pointer[arqConn]
	// order tracks record seqs on a stream without ARQ (payloads are not kept), to notice
	// a record missing for reorderStallTimeout; gapSince is when the current gap appeared
	// (zero: none). ReadPacket's goroutine only.
	order    arq.Receiver
	gapSince time.Time
	// rframe is the socket message holding rpayload, the payload the latest ReadPacket
	// returned, while the channel may still hand it back (ReleasePacket); nil when that
	// payload is not in a message of its own. ReadPacket's goroutine only.
	rframe, rpayload []byte

	cancelKeepalive context.CancelFunc
	keepaliveDone   chan struct{}
	closeOnce       sync.Once

	// arqMu orders startARQ against Close, so no routine starts after Close.
	arqMu  sync.Mutex
	closed bool // guarded by arqMu
}

var (
	_ channel.RecordConn     = (*relayRecordConn)(nil)
	_ channel.PacketReleaser = (*relayRecordConn)(nil)
)

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
	return c.writeFrameWith(ctx, body, nil)
}

// writeFrameWith is writeFrame with the ack and ack_bits that acks returns (nil: 0, as
// released), taken under the write lock so they are the freshest.
func (c *relayRecordConn) writeFrameWith(ctx context.Context, body frame.Body, acks func() (uint32, uint32)) error {
	f := frame.Frame{Version: frame.Version, StreamID: c.streamID, Body: body}
	if _, ok := body.(*frame.Handshake); ok {
		f.Traceparent = c.traceparent
		if c.offerARQ {
			f.Features = frame.FeatureARQ
		}
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if acks != nil {
		f.Ack, f.AckBits = acks()
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
	if a := c.arq.Load(); a != nil {
		return a.writePacket(ctx, p)
	}
	return c.writeFrame(ctx, &frame.Data{Seq: p.Seq, SegmentCount: frame.DataSegmentCount, Payload: p.Payload})
}

// ReadPacket returns the next handshake or data packet of this stream.
func (c *relayRecordConn) ReadPacket(ctx context.Context) (channel.Packet, error) {
	c.rframe, c.rpayload = nil, nil
	if a := c.arq.Load(); a != nil {
		r, err := a.readPacket(ctx)
		c.rframe, c.rpayload = r.frame, r.Payload
		return r.Packet, err
	}
	for {
		b, err := c.readFrame(ctx)
		if errors.Is(err, frame.ErrNonBinary) {
			return channel.Packet{}, errTextFrame
		}
		if err != nil {
			return channel.Packet{}, err
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
			if c.offerARQ && f.Features&frame.FeatureARQ != 0 {
				c.startARQ() // the executor accepted: every later read and write is ARQ's
			}
			return channel.Packet{Handshake: true, Payload: body.Payload}, nil
		case *frame.Data:
			c.trackOrder(body.Seq)
			c.rframe, c.rpayload = b, body.Payload
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

// ReleasePacket implements channel.PacketReleaser: the record the latest ReadPacket
// returned was copied out, so the socket message it arrived in goes back to wsconn's read
// buffers (issue 16: a receiving harness no longer allocates a 64 KiB buffer per record).
func (c *relayRecordConn) ReleasePacket(payload []byte) {
	if c.rframe != nil && len(payload) > 0 && len(c.rpayload) > 0 && &payload[0] == &c.rpayload[0] {
		wsconn.ReleaseFrame(c.rframe)
	}
	c.rframe, c.rpayload = nil, nil
}

// readFrame reads the next message; on a stream without ARQ with a record missing, it gives
// up with errReorderStall once the gap is reorderStallTimeout old (at least
// reorderStallGrace from now).
func (c *relayRecordConn) readFrame(ctx context.Context) ([]byte, error) {
	rctx := ctx
	if !c.gapSince.IsZero() {
		deadline := c.gapSince.Add(reorderStallTimeout)
		if grace := time.Now().Add(reorderStallGrace); deadline.Before(grace) {
			deadline = grace
		}
		var cancel context.CancelFunc
		rctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	b, err := c.ws.ReadFrame(rctx)
	if err != nil && rctx != ctx && ctx.Err() == nil && rctx.Err() != nil {
		return nil, errReorderStall
	}
	if err != nil && !errors.Is(err, frame.ErrNonBinary) {
		return nil, fmt.Errorf("reading relay frame: %w", err)
	}
	return b, err
}

// trackOrder notes a record seq on a stream without ARQ and starts or ends the gap clock.
// Seqs beyond the tracker's window are left to the channel, which fails on them itself.
func (c *relayRecordConn) trackOrder(seq uint32) {
	_, _ = c.order.Receive(nil, seq, nil, time.Time{})
	switch {
	case c.order.Buffered() == 0:
		c.gapSince = time.Time{}
	case c.gapSince.IsZero():
		c.gapSince = time.Now()
	}
}

// Close drops the socket (no close frame, like the reference harness) and waits for the
// keepalive goroutine and, with ARQ, its routines.
func (c *relayRecordConn) Close() error {
	c.closeOnce.Do(func() {
		c.cancelKeepalive()
		_ = c.ws.Close()
		c.arqMu.Lock()
		c.closed = true
		c.arqMu.Unlock()
		if a := c.arq.Load(); a != nil {
			a.close()
		}
		<-c.keepaliveDone
	})
	return nil
}
