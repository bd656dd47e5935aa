package initiator

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/relay/frame"
)

// TestARQ_Negotiated: the harness's handshake frame offers FeatureARQ; a marked
// message 2 switches the stream to ARQ: records sent out of order (1 before 0) reach the
// channel in order, the executor gets an ack_frame at once for the gap, the harness's own record
// carries the ack and is resent after the RTO until acknowledged.
func TestARQ_Negotiated(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var resent bool
	sawAck := make(chan struct{})
	var ackOnce sync.Once
	rc, done := scriptedPeer(t, true, func(ctx context.Context, c *websocket.Conn) error {
		f, err := readFrameFrom(ctx, c)
		if err != nil {
			return err
		}
		if f.Features != frame.FeatureARQ {
			return errors.New("handshake frame does not offer ARQ")
		}
		if err := writeFrameTo(ctx, c, frame.Frame{Features: frame.FeatureARQ, Body: &frame.Handshake{Payload: []byte("m2")}}); err != nil {
			return err
		}
		for _, seq := range []uint32{1, 0} {
			if err := writeFrameTo(ctx, c, frame.Frame{Body: &frame.Data{Seq: seq, SegmentCount: 1, Payload: []byte{byte('a' + seq)}}}); err != nil {
				return err
			}
		}
		sends := 0
		for {
			f, err := readFrameFrom(ctx, c)
			if err != nil {
				return err
			}
			switch b := f.Body.(type) {
			case *frame.Ack:
				// After the gap (1 before 0) the harness owes an ack at once: it ends
				// with ack 2 (possibly after one with ack 0 and bit 0 for seq 1).
				if f.Ack == 2 {
					ackOnce.Do(func() { close(sawAck) })
				}
			case *frame.Data:
				sends++
				if f.Ack != 2 || string(b.Payload) != "up" {
					return errors.New("harness data frame without the ack or with another payload")
				}
				if sends == 2 {
					resent = true
					return writeFrameTo(ctx, c, frame.Frame{Ack: 1, Body: &frame.Ack{}})
				}
			}
		}
	})
	handshake(ctx, t, rc)
	for want := range uint32(2) {
		p, err := rc.ReadPacket(ctx)
		if err != nil || p.Seq != want || p.Payload[0] != byte('a'+want) {
			t.Fatalf("record %d: got %+v, %v", want, p, err)
		}
	}
	select { // nothing else to send: the ack goes alone, at once
	case <-sawAck:
	case <-time.After(10 * time.Second):
		t.Fatal("no ack_frame with ack 2 within 10 s")
	}
	if err := rc.WritePacket(ctx, Packet{Seq: 0, Payload: []byte("up")}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !resent {
		t.Error("peer saw no resend of the harness's record")
	}
}

// TestARQ_NotAcceptedStaysReleased: with an unmarked message 2 (a released executor)
// the harness sends data with ack 0 and no ack_frame; and a record missing for
// reorderStallTimeout while a later one waits fails the stream (errReorderStall), so
// recovery replaces it instead of waiting forever.
func TestARQ_NotAcceptedStaysReleased(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rc, done := scriptedPeer(t, true, func(ctx context.Context, c *websocket.Conn) error {
		if _, err := readFrameFrom(ctx, c); err != nil {
			return err
		}
		if err := writeFrameTo(ctx, c, frame.Frame{Body: &frame.Handshake{Payload: []byte("m2")}}); err != nil {
			return err
		}
		if err := writeFrameTo(ctx, c, frame.Frame{Body: &frame.Data{Seq: 0, SegmentCount: 1, Payload: []byte("a")}}); err != nil {
			return err
		}
		f, err := readFrameFrom(ctx, c)
		if err != nil {
			return err
		}
		if f.Ack != 0 || f.AckBits != 0 || frame.KindOf(f.Body) != frame.KindData {
			return errors.New("harness frame carries ack fields or is not data")
		}
		// seq 1 lost: only 2 arrives.
		return writeFrameTo(ctx, c, frame.Frame{Body: &frame.Data{Seq: 2, SegmentCount: 1, Payload: []byte("c")}})
	})
	handshake(ctx, t, rc)
	if rc.ARQ() {
		t.Fatal("ARQ started without the executor's mark")
	}
	if p, err := rc.ReadPacket(ctx); err != nil || p.Seq != 0 {
		t.Fatalf("record 0: %+v, %v", p, err)
	}
	if err := rc.WritePacket(ctx, Packet{Seq: 0, Payload: []byte("up")}); err != nil {
		t.Fatal(err)
	}
	if p, err := rc.ReadPacket(ctx); err != nil || p.Seq != 2 {
		t.Fatalf("record 2: %+v, %v", p, err)
	}
	start := time.Now()
	if _, err := rc.ReadPacket(ctx); !errors.Is(err, errReorderStall) {
		t.Fatalf("read with seq 1 missing: got %v, want errReorderStall", err)
	}
	if waited := time.Since(start); waited > reorderStallTimeout+5*time.Second {
		t.Errorf("gave up after %v, want about %v", waited, reorderStallTimeout)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestStream_ReleasePacket: with and without ARQ, full-record payloads that the
// channel releases go back to the socket's read buffers, and payloads still held are never
// overwritten by the reads that follow (records 3 and 2 arrive swapped, so with ARQ one of
// them waits in the receiver and is not released).
func TestStream_ReleasePacket(t *testing.T) {
	const records = 12
	payload := func(seq uint32) []byte {
		b := make([]byte, maxRecordLen)
		for i := range b {
			b[i] = byte(seq*31 + uint32(i)*7)
		}
		return b
	}
	for _, offer := range []bool{false, true} {
		t.Run(map[bool]string{false: "released stream", true: "ARQ"}[offer], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			rc, done := scriptedPeer(t, offer, func(ctx context.Context, c *websocket.Conn) error {
				if _, err := readFrameFrom(ctx, c); err != nil {
					return err
				}
				m2 := frame.Frame{Body: &frame.Handshake{Payload: []byte("m2")}}
				if offer {
					m2.Features = frame.FeatureARQ
				}
				if err := writeFrameTo(ctx, c, m2); err != nil {
					return err
				}
				for _, seq := range []uint32{0, 1, 3, 2, 4, 5, 6, 7, 8, 9, 10, 11} {
					if err := writeFrameTo(ctx, c, frame.Frame{Body: &frame.Data{Seq: seq, SegmentCount: 1, Payload: payload(seq)}}); err != nil {
						return err
					}
				}
				return nil
			})
			handshake(ctx, t, rc)
			held := map[uint32][]byte{}
			for i := range records {
				p, err := rc.ReadPacket(ctx)
				if err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				if !bytes.Equal(p.Payload, payload(p.Seq)) {
					t.Fatalf("record seq %d: payload differs", p.Seq)
				}
				if p.Seq%2 == 0 {
					rc.ReleasePacket(p.Payload) // copied out, as the channel would
				} else {
					held[p.Seq] = p.Payload
				}
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			for seq, b := range held {
				if !bytes.Equal(b, payload(seq)) {
					t.Errorf("held record %d was overwritten after later reads", seq)
				}
			}
		})
	}
}

// handshake sends message 1 ("m1") on rc and reads message 2.
func handshake(ctx context.Context, t *testing.T, rc *Stream) {
	t.Helper()
	if err := rc.WritePacket(ctx, Packet{Handshake: true, Payload: []byte("m1")}); err != nil {
		t.Fatal(err)
	}
	if p, err := rc.ReadPacket(ctx); err != nil || !p.Handshake {
		t.Fatalf("message 2: %+v, %v", p, err)
	}
}
