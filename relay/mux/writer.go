package mux

import (
	"context"

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
// reused buffer. A write error closes the FrameConn, which ends the read loop and Run.
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
		var err error
		buf, err = frame.Encode(buf[:0], &f)
		if of.kind == frame.KindData {
			m.refs.release(of.payload, 1) // buf holds the copy (recrefs.go)
		}
		data.Payload = nil
		if err != nil {
			// Only an oversized payload can fail here; drop the stream's frame and end it.
			m.opts.Observer.FrameDropped(DropUnencodable)
			m.drops.warn(m.log, "dropping unencodable Noise relay frame", "error", err)
			m.endByID(of.streamID)
			continue
		}
		if err := m.fc.WriteFrame(ctx, buf); err != nil {
			m.log.Debug("writing relay frame failed", "error", err)
			_ = m.fc.Close()
			return
		}
	}
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
