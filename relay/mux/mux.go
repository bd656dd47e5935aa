package mux

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/execlab/executor/relay/frame"
)

// Handler runs one stream, on a goroutine owned by the Mux. ctx is the stream's context: it is
// cancelled when the stream ends for any reason (peer reset, cancelled pending handshake,
// socket end, Run's ctx). The stream ends when Handler returns.
type Handler func(ctx context.Context, s *Stream)

// Options configures a Mux. Nil means defaults; it is never mutated.
type Options struct {
	// MaxStreams bounds active streams. Default MaxStreams (128, the reference's value);
	// raise it only for benchmarks or deployments that know their rendezvous allows it.
	MaxStreams int
	// MaxPending bounds handshakes awaiting validation. Default MaxPending (32).
	MaxPending int
	// FailureBudget is the charged failures that start a cooldown. Default FailureBudget (8).
	FailureBudget int
	// Cooldown is the handshake pause after the budget is spent. Default Cooldown (10 s).
	Cooldown time.Duration
	// OutboundQueue is the outbound frame queue capacity. Default OutboundQueue (128).
	OutboundQueue int
	// InboundQueuePackets and InboundQueueBytes bound each stream's inbound queue. Defaults
	// InboundQueuePackets and InboundQueueBytes.
	InboundQueuePackets int
	InboundQueueBytes   int
	// Logger receives structured logs (component=relay/mux). Nil discards.
	Logger *slog.Logger
	// Observer receives drop, refusal and cooldown counts (metrics.go). Nil means none.
	Observer Observer
	// DisableARQ refuses ARQ v1 (docs/reliability.md §8) even when a harness offers it:
	// every stream then behaves as the released executor's. Default false: ARQ is accepted
	// from harnesses that offer it (only ours do).
	DisableARQ bool
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.MaxStreams, MaxStreams)
	def(&c.MaxPending, MaxPending)
	def(&c.FailureBudget, FailureBudget)
	def(&c.OutboundQueue, OutboundQueue)
	def(&c.InboundQueuePackets, InboundQueuePackets)
	def(&c.InboundQueueBytes, InboundQueueBytes)
	if c.Cooldown <= 0 {
		c.Cooldown = Cooldown
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.Logger = c.Logger.With("component", "relay/mux")
	if c.Observer == nil {
		c.Observer = nopObserver{}
	}
	return c
}

// Mux serves the streams of one physical relay connection. Create it with New and run it
// with Run, once.
type Mux struct {
	fc      FrameConn
	handler Handler
	opts    Options
	log     *slog.Logger
	drops   *warnLimiter // per-frame drop warnings, rate limited

	// out is the single outbound queue (capacity opts.OutboundQueue), drained by writeLoop.
	out chan outFrame
	// done is closed when Run begins shutting down; it stops writeLoop and blocked writers.
	done chan struct{}
	// refs counts the readers of pooled record buffers (recrefs.go).
	refs recRefs

	// mu guards the fields below. It is held briefly, never across FrameConn or Handler
	// calls; taken before any Stream.mu.
	mu            sync.Mutex
	streams       map[string]*Stream
	pending       int // streams in statePending or stateResponded
	active        int // streams in stateActive
	failures      int // charged failures since the last cooldown
	cooldownUntil time.Time
	closed        bool
	handlers      sync.WaitGroup // Handler and ARQ drive goroutines; Add only under mu while !closed, or under a live stream's arq.Timers lock
}

// New returns a Mux over fc that runs h for every stream. It starts nothing.
func New(fc FrameConn, h Handler, opts *Options) *Mux {
	o := opts.withDefaults()
	return &Mux{
		fc: fc, handler: h, opts: o, log: o.Logger, drops: newWarnLimiter(),
		out:     make(chan outFrame, o.OutboundQueue),
		done:    make(chan struct{}),
		streams: make(map[string]*Stream),
	}
}

// Stats is a snapshot of a Mux's counters.
type Stats struct {
	Active, Pending int
	// Failures counts charged failures since the last cooldown.
	Failures int
	// CoolingDown reports whether new handshakes are currently refused.
	CoolingDown bool
	// Outbound is the number of frames in the socket's outbound queue (at most
	// Options.OutboundQueue).
	Outbound int
}

// Stats returns a snapshot of the counters.
func (m *Mux) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Stats{Active: m.active, Pending: m.pending, Failures: m.failures,
		CoolingDown: time.Now().Before(m.cooldownUntil), Outbound: len(m.out)}
}

// Run reads and dispatches frames until the FrameConn fails or ctx is done, then ends every
// stream, closes the FrameConn and waits for the writer and all Handlers. It returns the read
// error that ended the connection (nil when ctx ended it).
func (m *Mux) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var writer sync.WaitGroup
	writer.Add(1)
	go func() {
		defer writer.Done()
		m.writeLoop(ctx)
	}()
	m.log.Debug("read loop started")
	err := m.readLoop(ctx)
	m.log.Debug("read loop stopped")
	if ctx.Err() != nil {
		err = nil
	}

	m.mu.Lock()
	m.closed = true
	for _, s := range m.streams {
		m.removeLocked(s, ErrConnClosed)
	}
	m.mu.Unlock()
	close(m.done)
	cancel()
	_ = m.fc.Close()
	writer.Wait()
	m.handlers.Wait()
	return err
}

func (m *Mux) readLoop(ctx context.Context) error {
	var d dispatcher
	d.m = m
	for {
		b, err := m.fc.ReadFrame(ctx)
		if err != nil {
			if errors.Is(err, frame.ErrNonBinary) {
				m.opts.Observer.FrameDropped(DropNonBinary)
				m.drops.warn(m.log, "dropping non-binary Noise relay frame from harness")
				continue
			}
			return fmt.Errorf("reading relay frame: %w", err)
		}
		d.handle(ctx, b)
	}
}

// chargeLocked records one charged handshake failure (spec §12.2).
func (m *Mux) chargeLocked(now time.Time) {
	if !m.cooldownUntil.IsZero() {
		if now.Before(m.cooldownUntil) {
			return // charges during a cooldown do not count
		}
		m.cooldownUntil = time.Time{}
		m.failures = 0
	}
	m.failures++
	if m.failures >= m.opts.FailureBudget {
		m.cooldownUntil = now.Add(m.opts.Cooldown)
		m.failures = 0
		m.opts.Observer.CooldownEntered()
		m.log.Warn("pausing Noise relay handshakes after repeated failures",
			"noise_event", "handshake", "cooldown", m.opts.Cooldown)
	}
}

// coolingLocked reports whether new handshakes are refused at now.
func (m *Mux) coolingLocked(now time.Time) bool {
	return !m.cooldownUntil.IsZero() && now.Before(m.cooldownUntil)
}

// removeLocked ends s with cause, if it is still the table's stream for its id and not yet
// ended, adjusting the counters. It reports whether it did.
func (m *Mux) removeLocked(s *Stream, cause error) bool {
	s.mu.Lock()
	st := s.state
	if st == stateEnded {
		s.mu.Unlock()
		return false
	}
	s.state = stateEnded
	s.endErr = cause
	s.inbox = nil
	s.inboxBytes = 0
	t := s.arqT
	s.mu.Unlock()
	s.cancel()
	s.wake()
	if t != nil {
		t.Stop()
	}
	if m.streams[s.id] == s {
		delete(m.streams, s.id)
	}
	switch st {
	case statePending, stateResponded:
		m.pending--
	case stateActive:
		m.active--
	}
	return true
}

// startLocked registers a new pending stream and starts its Handler.
func (m *Mux) startLocked(ctx context.Context, id string, msg1 []byte, traceparent string, offersARQ bool) {
	sctx, cancel := context.WithCancel(ctx)
	s := &Stream{m: m, id: id, ctx: sctx, cancel: cancel, notify: make(chan struct{}, 1),
		state: statePending, traceparent: traceparent, arqOffered: offersARQ}
	s.inbox = append(s.inbox, Packet{Handshake: true, Payload: msg1})
	s.inboxBytes = len(msg1)
	m.streams[id] = s
	m.pending++
	m.handlers.Add(1)
	go func() {
		defer m.handlers.Done()
		m.handler(sctx, s)
		s.end()
	}()
}
