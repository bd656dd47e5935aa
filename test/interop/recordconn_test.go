package interop_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/coder/websocket"

	"github.com/execlab/executor/noise/channel"
	"github.com/execlab/executor/relay/frame"
)

// errStreamReset is the harness's fixed reason for a reset of its stream (spec §13).
var errStreamReset = errors.New("Noise relay stream reset")

// wsRecordConn adapts the executor's rendezvous websocket to channel.RecordConn for one stream,
// acting as the harness side (spec/relay-noise.md §13): it writes handshake/data frames with
// relay/frame, and on read ignores other streams and resume/ack_frame/heartbeat, fails on text
// messages, undecodable or invalid frames and resets. Every binary message read is also kept
// (raw) for golden-vector checks.
//
// ReadPacket and WritePacket may run concurrently (coder/websocket allows one reader and one
// writer at a time); each is called by one goroutine at a time, as channel.RecordConn requires.
type wsRecordConn struct {
	ws       *websocket.Conn
	streamID string

	// writeBuf is reused by WritePacket; the websocket write completes before it returns.
	writeBuf []byte

	// mu guards raw: appended by ReadPacket, read by the test.
	mu  sync.Mutex
	raw []rawFrame
}

type rawFrame struct {
	bytes []byte
	frame frame.Frame // decoded from bytes (aliases it)
}

func newWSRecordConn(ws *websocket.Conn, streamID string) *wsRecordConn {
	return &wsRecordConn{ws: ws, streamID: streamID}
}

// writeFrame encodes f (validated) and sends it as one binary message.
func (c *wsRecordConn) writeFrame(ctx context.Context, f *frame.Frame) error {
	b, err := frame.Encode(c.writeBuf[:0], f)
	if err != nil {
		return err
	}
	c.writeBuf = b
	if err := c.ws.Write(ctx, websocket.MessageBinary, b); err != nil {
		return fmt.Errorf("writing %s frame: %w", frame.KindOf(f.Body), err)
	}
	return nil
}

func (c *wsRecordConn) WritePacket(ctx context.Context, p channel.Packet) error {
	f := frame.Frame{Version: frame.Version, StreamID: c.streamID}
	if p.Handshake {
		f.Body = &frame.Handshake{Payload: p.Payload}
	} else {
		f.Body = &frame.Data{Seq: p.Seq, SegmentCount: frame.DataSegmentCount, Payload: p.Payload}
	}
	return c.writeFrame(ctx, &f)
}

func (c *wsRecordConn) ReadPacket(ctx context.Context) (channel.Packet, error) {
	for {
		typ, b, err := c.ws.Read(ctx)
		if err != nil {
			return channel.Packet{}, fmt.Errorf("reading relay frame: %w", err)
		}
		if typ != websocket.MessageBinary {
			return channel.Packet{}, errors.New("Noise relay transport expects binary protobuf frames")
		}
		var f frame.Frame // fresh per message: f aliases b, which we keep
		if err := frame.Decode(&f, b); err != nil {
			return channel.Packet{}, err
		}
		if err := f.Validate(); err != nil {
			return channel.Packet{}, err
		}
		c.mu.Lock()
		c.raw = append(c.raw, rawFrame{bytes: b, frame: f})
		c.mu.Unlock()
		if f.StreamID != c.streamID {
			continue
		}
		switch body := f.Body.(type) {
		case *frame.Handshake:
			return channel.Packet{Handshake: true, Payload: body.Payload}, nil
		case *frame.Data:
			return channel.Packet{Seq: body.Seq, Payload: body.Payload}, nil
		case *frame.Reset:
			return channel.Packet{}, errStreamReset
		case *frame.Resume, *frame.Ack, *frame.Heartbeat:
			continue
		default:
			return channel.Packet{}, fmt.Errorf("unexpected relay frame body %s", frame.KindOf(body))
		}
	}
}

// rawFrames returns the binary messages read so far, oldest first.
func (c *wsRecordConn) rawFrames() []rawFrame {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]rawFrame(nil), c.raw...)
}
