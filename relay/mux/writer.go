package mux

import (
	"context"
	"errors"
	"fmt"

	"github.com/execlab/executor/relay/arq"
	"github.com/execlab/executor/relay/frame"
)

// outFrame is one queued outbound frame. payload is owned by the queue once enqueued.
type outFrame struct {
	streamID string
	kind     frame.Kind // KindData, KindHandshake, KindAck or KindReset
	seq      uint32
	payload  []byte
	// arq is the stream's ARQ state (data and ack frames of ARQ streams): the frame carries
	// its ack/ack_bits, taken when encoded so they are the freshest. nil: 0, as released.
	arq *arq.Endpoint
	// features is field 100 of a handshake frame (frame.FeatureARQ on an accepting msg 2).
	features uint32
}

// writeLoop is the only writer of the FrameConn. It encodes each queued frame into one
// reused buffer (only the head of a frame whose payload the FrameConn takes separately). A write error closes the FrameConn, which ends the read loop and Run.
func (m *Mux) writeLoop(ctx context.Context) {
	m.log.Debug("write loop started")
	defer m.log.Debug("write loop stopped")
	var (
		buf   []byte
		data  frame.Data
		hs    frame.Handshake
		ack   frame.Ack
		reset = frame.Reset{Reason: ResetReason}
		f     = frame.Frame{Version: frame.Version}
	)
	for {
		var of outFrame
		select {
		case <-m.done:
			return
		case of = <-m.out:
		}
		f.StreamID = of.streamID
		f.Ack, f.AckBits, f.Features = 0, 0, 0
		if of.arq != nil {
			f.Ack, f.AckBits = of.arq.TakeAck()
		}
		switch of.kind {
		case frame.KindData:
			data = frame.Data{Seq: of.seq, SegmentCount: frame.DataSegmentCount, Payload: of.payload}
			f.Body = &data
		case frame.KindHandshake:
			hs.Payload = of.payload
			f.Body = &hs
			f.Features = of.features
		case frame.KindAck:
			f.Body = &ack
		default:
			f.Body = &reset
		}
		err := m.writeFrame(ctx, &buf, &f, of.kind == frame.KindData)
		data.Payload, hs.Payload = nil, nil
		if err != nil {
			if errors.Is(err, errUnencodable) {
				// Only an oversized payload can fail here; drop the stream's frame and end it.
				m.opts.Observer.FrameDropped(DropUnencodable)
				m.drops.warn(m.log, "dropping unencodable Noise relay frame", "error", err)
				m.endByID(of.streamID)
				continue
			}
			m.log.Debug("writing relay frame failed", "error", err)
			_ = m.fc.Close()
			return
		}
	}
}

// errUnencodable marks a frame that could not be encoded (writeFrame).
var errUnencodable = errors.New("relay: unencodable frame")

// writeFrame encodes f into *buf (reused across frames) and writes it. A data frame's
// payload is a record whose queued reference is dropped here (recrefs.go) once nothing
// reads it any more: after the encoding when the frame is written whole, after the write
// when the FrameConn takes the payload as the frame's tail (SplitFrameWriter).
func (m *Mux) writeFrame(ctx context.Context, buf *[]byte, f *frame.Frame, data bool) error {
	var payload []byte // the record, while its queued reference is held
	if data {
		payload = f.Body.(*frame.Data).Payload
	}
	sw, split := m.fc.(SplitFrameWriter)
	var (
		b, tail []byte
		err     error
	)
	if split {
		b, tail, err = frame.EncodeSplit((*buf)[:0], f)
	} else {
		b, err = frame.Encode((*buf)[:0], f)
	}
	*buf = b
	if tail == nil {
		m.refs.release(payload, 1) // b holds the copy, or the frame failed to encode
		payload = nil
	}
	if err != nil {
		return fmt.Errorf("%w: %w", errUnencodable, err)
	}
	if split {
		err = sw.WriteFrameSplit(ctx, b, tail)
	} else {
		err = m.fc.WriteFrame(ctx, b)
	}
	m.refs.release(payload, 1) // nil (a no-op) unless the write read the record as its tail
	return err
}

// sendReset enqueues a reset for id, best-effort: dropped when the queue is full (spec
// §12.3).
func (m *Mux) sendReset(id string) {
	select {
	case m.out <- outFrame{streamID: id, kind: frame.KindReset}:
	default:
		m.log.Debug("dropping Noise relay reset: outbound queue full", "stream_id", id)
	}
}

// endByID ends the stream currently registered under id and resets it.
func (m *Mux) endByID(id string) {
	m.mu.Lock()
	s := m.streams[id]
	ended := s != nil && m.removeLocked(s, ErrStreamClosed)
	m.mu.Unlock()
	if ended {
		m.sendReset(id)
	}
}
