package arq

import (
	"context"
	"sync"
	"time"
)

// Endpoint is one stream's ARQ state for a driver: a Sender and a Receiver under one lock,
// with the two wake-ups a driver needs (the window opened; a deadline moved). It starts no
// goroutines: its timers are driven by Timers (timers.go, the one driver of both relay
// sides), and the stream's owner calls Send before writing each record, TakeAck while
// encoding each outgoing frame, and OnAck/Receive for each incoming one. All methods are safe for concurrent use. After a protocol error every
// method returns it (the driver resets the stream).
type Endpoint struct {
	// mu guards the fields below; it is never held while calling the driver or blocking.
	mu    sync.Mutex
	snd   Sender
	rcv   Receiver
	err   error     // sticky protocol error
	armed time.Time // the deadline Poll last reported (zero: none, not before a wake)

	room chan struct{} // cap 1: the send window may have opened

	// hold is called under mu for each record Poll hands out (SetHold).
	hold func(payload []byte)
	// wake (SetWake) is called without mu held when a deadline may have moved before armed.
	wake    func()
	drained bool // Drain was called: nothing is retained or resent any more
}

// SetHold installs hold, called with the Endpoint's lock held for each record Poll is
// about to hand to the driver, before an ack can release it: a driver that reuses released
// buffers (OnAckRelease) takes a reference there, so a resend still queued keeps its bytes.
// hold must not block or call the Endpoint. Call SetHold before the driver starts.
func (e *Endpoint) SetHold(hold func(payload []byte)) {
	e.mu.Lock()
	e.hold = hold
	e.mu.Unlock()
}

// SetWake installs wake, called (without the Endpoint's lock held, possibly with the
// caller of Send, OnAckRelease or Receive holding its own locks) whenever a deadline may
// have moved before the one Poll last reported: the driver (Timers) then calls Poll again.
// wake must not block or call the Endpoint. Call it before use; without it nothing wakes.
func (e *Endpoint) SetWake(wake func()) {
	e.mu.Lock()
	e.wake = wake
	e.mu.Unlock()
}

func (e *Endpoint) kicked() {
	e.mu.Lock()
	wake := e.wake
	e.mu.Unlock()
	if wake != nil {
		wake()
	}
}

// NewEndpoint returns an Endpoint with nothing sent or received.
func NewEndpoint() *Endpoint {
	return &Endpoint{room: make(chan struct{}, 1)}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Send waits until the window has room for payload, then records the record seq as sent
// (retained until acknowledged; the caller must not modify payload). The caller transmits
// it right after. It returns ctx's error if ctx ends first, and ErrClosed if done is closed
// first (the driver's stream ended; nil means never).
func (e *Endpoint) Send(ctx context.Context, done <-chan struct{}, seq uint32, payload []byte) error {
	for {
		e.mu.Lock()
		if e.err != nil {
			e.mu.Unlock()
			return e.err
		}
		if e.snd.Room(len(payload)) {
			wasIdle := e.snd.next == e.snd.base
			err := e.snd.Sent(seq, payload, time.Now())
			if err != nil {
				e.err = err
			}
			e.mu.Unlock()
			if wasIdle {
				e.kicked() // the first retained record arms the timeout
			}
			return err
		}
		e.mu.Unlock()
		select {
		case <-e.room:
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
			return ErrClosed
		}
	}
}

// OnAck applies an incoming frame's ack and ack_bits.
func (e *Endpoint) OnAck(ack, bits uint32) error {
	_, err := e.OnAckRelease(nil, ack, bits)
	return err
}

// OnAckRelease is OnAck that also appends to released the payloads the Endpoint no longer
// retains (Sender.Ack): each is handed back exactly once, here or by Drain, and is never
// returned by Poll again.
func (e *Endpoint) OnAckRelease(released [][]byte, ack, bits uint32) ([][]byte, error) {
	e.mu.Lock()
	if e.err != nil {
		e.mu.Unlock()
		return released, e.err
	}
	released, progress, err := e.snd.Ack(released, ack, bits, time.Now())
	if err != nil {
		e.err = err
	}
	e.mu.Unlock()
	if progress {
		signal(e.room)
		e.kicked() // fast resends may be due
	}
	return released, err
}

// Drain ends the Endpoint (every later call fails with ErrClosed unless a protocol error
// came first) and appends to dst the payloads still retained, for a driver that reuses
// them. The driver must not be polling, or must be about to stop: Poll resends nothing
// after Drain.
func (e *Endpoint) Drain(dst [][]byte) [][]byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil {
		e.err = ErrClosed
	}
	e.drained = true
	return e.snd.Drain(dst)
}

// Receive takes an incoming record and appends the records now deliverable in order to
// ready (payloads retained, not copied); they have consecutive seqs from first.
func (e *Endpoint) Receive(ready [][]byte, seq uint32, payload []byte) (_ [][]byte, first uint32, _ error) {
	now := time.Now()
	e.mu.Lock()
	if e.err != nil {
		e.mu.Unlock()
		return ready, 0, e.err
	}
	first = uint32(e.rcv.next)
	ready, err := e.rcv.Receive(ready, seq, payload, now)
	if err != nil {
		e.err = err
	}
	at, due := e.rcv.AckDeadline()
	wake := due && (e.armed.IsZero() || at.Before(e.armed))
	e.mu.Unlock()
	if wake {
		e.kicked()
	}
	return ready, first, err
}

// TakeAck returns the ack and ack_bits to put on an outgoing frame, and counts them as sent.
func (e *Endpoint) TakeAck() (ack, bits uint32) {
	e.mu.Lock()
	defer e.mu.Unlock()
	ack, bits = e.rcv.Ack()
	e.rcv.AckSent()
	return ack, bits
}

// Retained returns the records and bytes the sender holds unacknowledged.
func (e *Endpoint) Retained() (records, bytes int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.snd.Retained()
}

// Err returns the sticky protocol error, if any.
func (e *Endpoint) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// Poll is one step of the timers (Timers calls it): it appends
// to resends the records due for a resend (hold called for each), reports whether a
// standalone ack_frame is due (only when there is nothing to resend; it counts as sent),
// and returns the next deadline (ok false: none; the driver then waits for wake, SetWake).
// The driver transmits what Poll returned, then calls Poll again at next or on wake.
func (e *Endpoint) Poll(resends []Resend, now time.Time) (_ []Resend, ack bool, next time.Time, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.drained {
		n := len(resends)
		resends = e.snd.Due(resends, now)
		if e.hold != nil {
			for _, r := range resends[n:] {
				e.hold(r.Payload)
			}
		}
	}
	ack = len(resends) == 0 && e.rcv.AckDue(now)
	if ack {
		e.rcv.AckSent() // the ack_frame takes the freshest values when it is encoded
	}
	next, ok = e.snd.Deadline()
	if at, due := e.rcv.AckDeadline(); due && (!ok || at.Before(next)) {
		next, ok = at, true
	}
	e.armed = time.Time{}
	if ok {
		e.armed = next
	}
	return resends, ack, next, ok
}
