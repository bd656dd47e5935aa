package initiator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/execlab/executor/relay/arq"
	"github.com/execlab/executor/relay/frame"
)

// ARQ v1 on the initiator side (docs/reliability.md §8). The harness offers it by setting
// frame.FeatureARQ on its handshake frame (message 1) when Options.OfferARQ; a released
// executor skips the field and answers with an unmarked message 2, and the stream stays
// exactly the released one. When message 2's frame carries the bit too, the Stream
// switches to arqConn before returning message 2:
//
//	readRoutine   reads every frame of the socket (so acks are seen even while nobody
//	              reads records), applies §13's rules, applies ack/ack_bits, passes data
//	              through the ARQ receiver and queues the records released in order
//	              (bounded by arqQueueBytes; when full the routine waits: TCP back-pressure,
//	              as a released harness that stops reading)
//	timers        arq.Timers, the driver relay/mux uses too: a drive goroutine runs only
//	              while a resend or an ack_frame is due, and an AfterFunc timer is armed
//	              only while a deadline is pending
//	WritePacket   waits for room in the send window, then writes the record with the
//	              freshest ack/ack_bits
//
// The read routine and the drive goroutines are owned by the Stream and waited for by its
// Close.

// errARQProtocol wraps an ARQ protocol error from the executor (an ack of an unsent seq, a
// record beyond the window): the stream fails and recovery takes over.
var errARQProtocol = errors.New("Noise relay ARQ protocol error")

// arqConn is the ARQ state of one harness stream.
type arqConn struct {
	rc *Stream
	e  *arq.Endpoint
	t  *arq.Timers

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // readRoutine and the timers' drive goroutines

	// mu guards the fields below (a leaf lock).
	mu     sync.Mutex
	queue  []queuedRecord // records released in order, not read yet
	qBytes int
	err    error         // sticky: the stream failed
	avail  chan struct{} // cap 1: queue grew or err was set
	space  chan struct{} // cap 1: queue shrank
}

// queuedRecord is a record released in order and the socket message holding it, when the
// payload arrived in a message of its own and went straight through (nil otherwise: it
// waited in the ARQ receiver, or shares its message), for ReleasePacket.
type queuedRecord struct {
	Packet
	frame []byte
}

// startARQ switches c to ARQ and starts its routines. Called by ReadPacket (one goroutine)
// right after message 2, before anything else is read or written on the stream.
func (c *Stream) startARQ() {
	c.arqMu.Lock()
	defer c.arqMu.Unlock()
	if c.closed {
		return // Close already ran: the stream is over; reads fail on the closed socket
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &arqConn{rc: c, e: arq.NewEndpoint(), ctx: ctx, cancel: cancel,
		avail: make(chan struct{}, 1), space: make(chan struct{}, 1)}
	a.t = arq.NewTimers(a.e, arq.TimersConfig{Send: a.sendDue, Group: &a.wg})
	c.arq.Store(a)
	a.wg.Add(1)
	go func() { defer a.wg.Done(); a.readRoutine() }()
}

func wakeup(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// fail records the stream's first failure and wakes ReadPacket.
func (a *arqConn) fail(err error) {
	a.mu.Lock()
	a.err = cmp.Or(a.err, err) // the first failure sticks
	a.mu.Unlock()
	wakeup(a.avail)
}

// readRoutine reads the socket until it fails or Close. Owner: the arqConn.
func (a *arqConn) readRoutine() {
	var (
		f     frame.Frame
		ready [][]byte
	)
	for {
		b, err := a.rc.ws.ReadFrame(a.ctx)
		if errors.Is(err, frame.ErrNonBinary) {
			a.fail(errTextFrame)
			return
		}
		if err != nil {
			a.fail(fmt.Errorf("reading relay frame: %w", err))
			return
		}
		if err := frame.Decode(&f, b); err != nil {
			a.fail(fmt.Errorf("decoding relay frame: %w", err))
			return
		}
		if err := f.Validate(); err != nil {
			a.fail(fmt.Errorf("validating relay frame: %w", err))
			return
		}
		if f.StreamID != a.rc.streamID {
			continue
		}
		switch body := f.Body.(type) {
		case *frame.Data:
			if err := a.e.OnAck(f.Ack, f.AckBits); err != nil {
				a.fail(fmt.Errorf("%w: %w", errARQProtocol, err))
				return
			}
			if !a.waitSpace(len(body.Payload)) {
				return
			}
			var first uint32
			ready, first, err = a.e.Receive(ready[:0], body.Seq, body.Payload)
			if err != nil {
				a.fail(fmt.Errorf("%w: %w", errARQProtocol, err))
				return
			}
			a.push(ready, first, b, body.Payload)
		case *frame.Ack:
			if err := a.e.OnAck(f.Ack, f.AckBits); err != nil {
				a.fail(fmt.Errorf("%w: %w", errARQProtocol, err))
				return
			}
		case *frame.Reset:
			a.fail(ErrStreamReset)
			return
		case *frame.Handshake:
			a.fail(errHandshakeInTransport)
			return
		case *frame.Resume, *frame.Heartbeat:
		default:
			a.fail(fmt.Errorf("unexpected relay frame body %s", frame.KindOf(body)))
			return
		}
	}
}

// waitSpace waits until the queue has room for n more bytes (or is empty); false when the
// conn is closing.
func (a *arqConn) waitSpace(n int) bool {
	for {
		a.mu.Lock()
		ok := len(a.queue) == 0 || a.qBytes+n <= arqQueueBytes
		a.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-a.space:
		case <-a.ctx.Done():
			return false
		}
	}
}

// push queues records released in order, with consecutive seqs from first; the one that
// is payload, the frame just read, carries msg, the socket message holding it.
func (a *arqConn) push(ready [][]byte, first uint32, msg, payload []byte) {
	if len(ready) == 0 {
		return
	}
	a.mu.Lock()
	for i, r := range ready {
		var held []byte
		if len(r) > 0 && len(payload) > 0 && &r[0] == &payload[0] {
			held = msg
		}
		a.queue = append(a.queue, queuedRecord{Packet: Packet{Seq: first + uint32(i), Payload: r}, frame: held})
		a.qBytes += len(r)
		ready[i] = nil
	}
	a.mu.Unlock()
	wakeup(a.avail)
}

// readPacket returns the next record in order.
func (a *arqConn) readPacket(ctx context.Context) (queuedRecord, error) {
	for {
		p, ok, err := a.pop()
		if ok || err != nil {
			return p, err
		}
		select {
		case <-a.avail:
		case <-ctx.Done():
			return queuedRecord{}, ctx.Err()
		}
	}
}

// pop takes the oldest queued record (ok) and makes room for the read routine, or returns
// the stream's error once the queue is empty.
func (a *arqConn) pop() (p queuedRecord, ok bool, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.queue) == 0 {
		return p, false, a.err
	}
	p, a.queue[0] = a.queue[0], queuedRecord{}
	if a.queue = a.queue[1:]; len(a.queue) == 0 {
		a.queue = nil // drop the backing array while idle
	}
	a.qBytes -= len(p.Payload)
	wakeup(a.space)
	return p, true, nil
}

// writePacket sends a record once the window has room; it stays retained until
// acknowledged.
func (a *arqConn) writePacket(ctx context.Context, p Packet) error {
	if err := a.e.Send(ctx, a.ctx.Done(), p.Seq, p.Payload); err != nil {
		return fmt.Errorf("waiting for the ARQ window: %w", err)
	}
	return a.writeData(ctx, p.Seq, p.Payload)
}

// writeData writes one data frame with the freshest ack/ack_bits.
func (a *arqConn) writeData(ctx context.Context, seq uint32, payload []byte) error {
	return a.rc.writeFrameWith(ctx, &frame.Data{Seq: seq, SegmentCount: frame.DataSegmentCount, Payload: payload}, a.e.TakeAck)
}

// sendDue writes what the timers found due (arq.Timers' Send): resends byte for byte, then
// a standalone ack_frame. A write failure fails the stream.
func (a *arqConn) sendDue(resends []arq.Resend, ack bool) error {
	err := a.writeDue(resends, ack)
	if err != nil && a.ctx.Err() == nil {
		a.fail(err)
	}
	return err
}

func (a *arqConn) writeDue(resends []arq.Resend, ack bool) error {
	for _, r := range resends {
		if err := a.writeData(a.ctx, r.Seq, r.Payload); err != nil {
			return err
		}
	}
	if ack {
		return a.rc.writeFrameWith(a.ctx, &frame.Ack{}, a.e.TakeAck)
	}
	return nil
}

// close stops the read routine and the timers (the socket is already closed or being
// closed) and waits for them.
func (a *arqConn) close() {
	a.cancel()
	a.t.Stop()
	a.wg.Wait()
}
