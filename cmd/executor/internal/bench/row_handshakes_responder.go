package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/execlab/executor/noise"
)

// handshakes_responder: what an executor pays per harness (issue 16): complete
// responder-side hybrid IK handshakes (noise package, in the bench process, no I/O) per
// CPU-second. A sample runs responderHandshakesPerSample handshakes in batches of
// responderBatch: for each batch the initiators' message 1 (64-byte authorization
// payload) are made before the timer; timed is only the responder: NewHandshake,
// ReadMessage (message 1), WriteMessage (message 2), Split, one handshake after the
// other; after the timer each initiator reads message 2, splits, and a record sealed by
// the responder must open at the initiator, so every handshake is checked end to end.
// Batches keep the bench's own scaffolding (the initiators waiting for message 2) to what
// an executor holds, a few dozen handshakes, instead of a heap of hundreds whose marking
// the collector would charge to the timed phase. One handshake at a time: on the bench
// machine two busy vCPUs slow each other's vector code by about 10 % (docs/bench.md), a
// cost of the machine's sharing that a per-core figure should not carry; the collector
// and the runtime still count, on whichever CPU they run. The sample is handshakes per
// CPU-second of the bench process (getrusage user + system, summed over the timed
// phases), i.e. per core. No reference column. Goal: ≥ 3,000.

// pendingResponder is one handshake whose message 1 is ready: the initiator waiting for
// message 2, and what the timed phase produced.
type pendingResponder struct {
	in   *noise.HandshakeState
	msg1 []byte
	msg2 []byte
	send *noise.CipherState // the responder's, toward the initiator
}

func measureHandshakesResponder(ctx context.Context, e *Env, side *Side) (float64, error) {
	peers, err := newHandshakePeers()
	if err != nil {
		return 0, err
	}
	total := quick(e, responderHandshakesPerSample, responderHandshakesPerSampleQuick)
	auth := bytes.Repeat([]byte{'a'}, 64)
	hs := make([]pendingResponder, responderBatch)
	var used time.Duration
	for done := 0; done < total; done += len(hs) {
		hs = hs[:min(responderBatch, total-done)]
		d, err := peers.respondBatch(ctx, hs, auth)
		if err != nil {
			return 0, fmt.Errorf("handshakes %d…: %w", done, err)
		}
		used += d
	}
	if used <= 0 {
		return 0, errors.New("handshakes_responder: no CPU time measured")
	}
	return float64(total) / used.Seconds(), nil
}

// respondBatch prepares len(hs) initiators, times the responders (one after the other)
// and checks every handshake; it returns the CPU time of the timed phase.
func (p *handshakePeers) respondBatch(ctx context.Context, hs []pendingResponder, auth []byte) (time.Duration, error) {
	for i := range hs {
		in, err := noise.NewHandshake(&noise.Config{Initiator: true, Static: p.initiator, RemoteStatic: &p.responderPub, Prologue: p.prologue})
		if err != nil {
			return 0, err
		}
		msg1, err := in.WriteMessage(nil, auth)
		if err != nil {
			return 0, err
		}
		hs[i] = pendingResponder{in: in, msg1: msg1}
	}
	cpu0, err := cpuTime()
	if err != nil {
		return 0, err
	}
	for i := range hs {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		if err := p.respond(&hs[i], auth); err != nil {
			return 0, fmt.Errorf("handshake %d: %w", i, err)
		}
	}
	cpu1, err := cpuTime()
	if err != nil {
		return 0, err
	}
	for i := range hs {
		if err := hs[i].check(auth); err != nil {
			return 0, fmt.Errorf("handshake %d: %w", i, err)
		}
	}
	return cpu1 - cpu0, nil
}

// respond is the executor's half of one handshake: what is timed.
func (p *handshakePeers) respond(h *pendingResponder, auth []byte) error {
	resp, err := noise.NewHandshake(&noise.Config{Static: p.responder, Prologue: p.prologue})
	if err != nil {
		return err
	}
	got, err := resp.ReadMessage(nil, h.msg1)
	if err != nil {
		return err
	}
	if !bytes.Equal(got, auth) {
		return fmt.Errorf("%w: message 1 payload differs", errDataLoss)
	}
	if h.msg2, err = resp.WriteMessage(nil, nil); err != nil {
		return err
	}
	h.send, _, err = resp.Split()
	return err
}

// check completes the initiator's half and opens one record from the responder.
func (h *pendingResponder) check(auth []byte) error {
	if _, err := h.in.ReadMessage(nil, h.msg2); err != nil {
		return err
	}
	_, recv, err := h.in.Split()
	if err != nil {
		return err
	}
	return checkRecord(h.send, recv, auth)
}
