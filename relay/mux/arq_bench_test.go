package mux_test

import (
	"context"
	"sync"
	"testing"

	"github.com/execlab/executor/internal/recbuf"
	"github.com/execlab/executor/relay/arq"
	"github.com/execlab/executor/relay/frame"
	"github.com/execlab/executor/relay/mux"
	"github.com/execlab/executor/relay/relaytest"
)

// BenchmarkStreamRecords measures one stream's full records (61456 B) from a Handler's
// WritePacket through the Mux's writer to a peer over an in-memory pipe, without ARQ (the
// released stream) and with ARQ v1 (the peer runs an arq.Endpoint and acknowledges with
// ack_frames, as our harness does): the difference is the cost of the acks, retention and
// timers on both ends.
// The pooled variants hand the Mux records in recbuf buffers, as noise/channel does, which
// the Mux returns once sent (released) or acknowledged (arq).
func BenchmarkStreamRecords(b *testing.B) {
	b.Run("released", func(b *testing.B) { benchStreamRecords(b, false, false) })
	b.Run("arq", func(b *testing.B) { benchStreamRecords(b, true, false) })
	b.Run("released-pooled", func(b *testing.B) { benchStreamRecords(b, false, true) })
	b.Run("arq-pooled", func(b *testing.B) { benchStreamRecords(b, true, true) })
}

func benchStreamRecords(b *testing.B, useARQ, pooled bool) {
	const recLen = 61456
	payload := make([]byte, recLen)
	a, peer := relaytest.Pipe(0)
	streams := make(chan *mux.Stream, 1)
	h := func(ctx context.Context, s *mux.Stream) {
		if _, err := s.ReadPacket(ctx); err != nil {
			return
		}
		if s.WritePacket(ctx, mux.Packet{Handshake: true, Payload: []byte("m2")}) != nil || s.Established() != nil {
			return
		}
		streams <- s
		<-ctx.Done()
	}
	m := mux.New(a, h, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	wg.Add(1)
	go func() { defer wg.Done(); _ = m.Run(ctx) }()

	write := func(f frame.Frame) error {
		f.Version, f.StreamID = frame.Version, "s-1"
		enc, err := frame.Encode(nil, &f)
		if err != nil {
			return err
		}
		return peer.WriteFrame(ctx, enc)
	}
	hs := frame.Frame{Body: &frame.Handshake{Payload: []byte("m1")}}
	if useARQ {
		hs.Features = frame.FeatureARQ
	}
	if err := write(hs); err != nil {
		b.Fatal(err)
	}
	if _, err := peer.ReadFrame(ctx); err != nil { // message 2
		b.Fatal(err)
	}
	s := <-streams
	var e *arq.Endpoint
	if useARQ {
		e = arq.NewEndpoint()
		var ackMu sync.Mutex // peer writes: one at a time
		tm := arq.NewTimers(e, arq.TimersConfig{Group: &wg, Send: func(_ []arq.Resend, ack bool) error {
			if !ack {
				return nil
			}
			ackMu.Lock()
			defer ackMu.Unlock()
			f := frame.Frame{Body: &frame.Ack{}}
			f.Ack, f.AckBits = e.TakeAck()
			return write(f)
		}})
		defer tm.Stop()
	}
	b.SetBytes(recLen)
	b.ReportAllocs()
	b.ResetTimer()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range b.N {
			p := payload
			if pooled {
				p = append(recbuf.Get(), payload...) // as noise/channel seals a record
			}
			if s.WritePacket(ctx, mux.Packet{Seq: uint32(i), Payload: p}) != nil {
				return
			}
		}
	}()
	var (
		f     frame.Frame
		ready [][]byte
		got   int
	)
	for got < b.N {
		msg, err := peer.ReadFrame(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := frame.Decode(&f, msg); err != nil {
			b.Fatal(err)
		}
		d, ok := f.Body.(*frame.Data)
		if !ok {
			continue
		}
		if e == nil {
			got++
			continue
		}
		ready, _, err = e.Receive(ready[:0], d.Seq, d.Payload)
		if err != nil {
			b.Fatal(err)
		}
		got += len(ready)
	}
	b.StopTimer()
}
