package arq

import (
	"sync"
	"time"
)

// Timers is the one timer driver of an Endpoint, used by both sides of the relay
// (relay/mux on the executor, relay/initiator on the harness): it resends due records and
// sends due standalone ack_frames without a goroutine of its own while idle. A drive
// goroutine runs only while something is due, and a time.AfterFunc timer is armed only
// while a deadline is pending (a record is unacknowledged or an ack is delayed), so an idle
// stream holds neither.
//
// Ownership: every drive goroutine is counted in the owner's WaitGroup (TimersConfig.Group)
// from before it starts until it exits. After Stop no new one starts, so the owner calls
// Stop, then Wait on its group. Methods are safe for concurrent use.
type Timers struct {
	e   *Endpoint
	cfg TimersConfig

	// mu guards the fields below. It is a leaf: never held while calling the Endpoint's
	// blocking methods, Send or Release. The Endpoint calls wake without its own lock.
	mu      sync.Mutex
	running bool        // a drive goroutine runs
	again   bool        // woken while running: poll once more before exiting
	stopped bool        // Stop ran: no new drive goroutine, no timer
	timer   *time.Timer // AfterFunc(wake), allocated on the first deadline
}

// TimersConfig is what a driver's owner gives NewTimers. It is never mutated.
type TimersConfig struct {
	// Send transmits what is due, on the drive goroutine: each resend byte for byte (with
	// TakeAck's values), then a standalone ack_frame when ack is set. An error ends the
	// drive round without arming a timer (the owner is ending the stream); a later wake
	// starts a new round. Required.
	Send func(resends []Resend, ack bool) error
	// Release, when set, takes back each payload still retained when the driver stops
	// (Endpoint.Drain), for an owner that reuses record buffers. Nil: they go to the GC.
	Release func(payload []byte)
	// Group counts the drive goroutines; the owner waits on it after Stop. Required.
	Group *sync.WaitGroup
}

// NewTimers installs a driver on e (Endpoint.SetWake) and returns it. It starts nothing:
// the first drive goroutine starts when the Endpoint reports a deadline (a record sent,
// an ack delayed).
func NewTimers(e *Endpoint, cfg TimersConfig) *Timers {
	t := &Timers{e: e, cfg: cfg}
	e.SetWake(t.wake)
	return t
}

// wake starts a drive goroutine unless one runs (it then polls again) or the driver
// stopped. Called by the Endpoint (maybe with the owner's locks held) and by the timer.
func (t *Timers) wake() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	if t.running {
		t.again = true
		return
	}
	t.running = true
	// Stop sets stopped under t.mu before the owner waits, so this Add never races the
	// owner's Wait.
	t.cfg.Group.Add(1)
	go t.drive()
}

// Stop ends the driver when the stream ends: no drive goroutine starts afterwards, the
// armed timer is stopped, and the retained records go to Release (Endpoint.Drain) now, or
// when the running drive goroutine exits. It does not wait: the owner waits on its Group.
func (t *Timers) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	t.stopped = true
	if t.timer != nil {
		t.timer.Stop()
	}
	if !t.running {
		t.drainLocked()
	}
}

// drainLocked: nothing will be resent; the retained records go back to the owner.
func (t *Timers) drainLocked() {
	for _, p := range t.e.Drain(nil) {
		if t.cfg.Release != nil {
			t.cfg.Release(p)
		}
	}
}

// drive sends what is due until nothing is, then arms the timer for the next deadline and
// exits. Owner: the TimersConfig.Group's owner.
func (t *Timers) drive() {
	defer t.cfg.Group.Done()
	var buf []Resend
	for {
		var (
			ack  bool
			next time.Time
			ok   bool
		)
		buf, ack, next, ok = t.e.Poll(buf[:0], time.Now())
		if len(buf) > 0 || ack {
			if err := t.cfg.Send(buf, ack); err != nil {
				t.idle()
				return
			}
			clear(buf)
			continue // re-evaluate: sending took time
		}
		if t.exit(ok, next) {
			return
		}
	}
}

// idle ends the drive goroutine after a failed Send, without arming the timer: the owner
// is ending the stream, and a later wake starts a new round.
func (t *Timers) idle() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.running, t.again = false, false
	if t.stopped {
		t.drainLocked()
	}
}

// exit ends the drive goroutine unless it was woken meanwhile (it reports false then),
// arming the timer for next when ok. A stopped driver drains instead.
func (t *Timers) exit(ok bool, next time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		t.running = false
		t.drainLocked()
		return true
	}
	if t.again {
		t.again = false
		return false
	}
	t.running = false
	if ok {
		d := max(time.Until(next), 0)
		if t.timer == nil {
			t.timer = time.AfterFunc(d, t.wake)
		} else {
			t.timer.Reset(d)
		}
	}
	return true
}
