package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
)

// session is one initialized harness connection to an instance, with process
// notifications routed to per-process handlers and http/request/bodyDelta notifications to
// per-request handlers.
type session struct {
	client *harness.Client

	// mu guards procs and bodies: handlers are registered by the measuring goroutine and
	// looked up on the client's read loop.
	mu     sync.Mutex
	procs  map[string]func(harness.Notification) // by processId; guarded by mu
	bodies map[string]func(*bodyDelta)           // by requestId; guarded by mu

	// delta is the decoding scratch of route, used only on the client's read loop; a
	// handler must not keep it.
	delta bodyDelta

	// missingChanged receives the watchId of every fs/missingChanged (watchmissing_latency);
	// full: dropped (one watch is armed at a time, so one slot suffices). nextWatchID is
	// the last fs/watchMissing generation used; measuring goroutine only.
	missingChanged chan uint64
	nextWatchID    uint64
}

func newSession() *session {
	return &session{procs: map[string]func(harness.Notification){}, bodies: map[string]func(*bodyDelta){},
		missingChanged: make(chan uint64, 1)}
}

// openSession dials a local executor's ws:// url and completes the handshake.
func openSession(ctx context.Context, url string) (*session, error) {
	s := newSession()
	c, err := harness.DialLocal(ctx, url, &harness.Options{OnNotification: s.route})
	if err != nil {
		return nil, err
	}
	return s.initialize(ctx, c)
}

// openRemoteSession connects to environment env through the registry at registryURL and
// its rendezvous (connect, websocket, hybrid Noise handshake) and completes the handshake.
func openRemoteSession(ctx context.Context, registryURL, env, token string) (*session, error) {
	return openRemoteSessionOpts(ctx, registryURL, env, token, remoteSessionOpts{})
}

// remoteSessionOpts switches harness extensions off for a session (zero: all on).
type remoteSessionOpts struct {
	noOutputAck bool // no processOutputAck: processes run as with a released harness
	noARQ       bool // relay ARQ v1 not offered: the released relay stream (relay_stream_arq)
}

// openRemoteSessionOpts is openRemoteSession with o.
func openRemoteSessionOpts(ctx context.Context, registryURL, env, token string, o remoteSessionOpts) (*session, error) {
	s := newSession()
	dctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	c, err := harness.Dial(dctx, &harness.RemoteOptions{
		Registry: registryURL, EnvironmentID: env, Token: token,
		Client:     &harness.Options{OnNotification: s.route, DisableOutputAck: o.noOutputAck},
		DisableARQ: o.noARQ,
	})
	if err != nil {
		return nil, err
	}
	return s.initialize(ctx, c)
}

// initialize sends initialize + initialized on c; on failure it closes c.
func (s *session) initialize(ctx context.Context, c *harness.Client) (*session, error) {
	s.client = c
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if _, err := c.Initialize(cctx, "executor-bench", ""); err != nil {
		c.Close()
		return nil, err
	}
	return s, nil
}

func (s *session) close() { s.client.Close() }

// call makes one request bounded by callTimeout.
func (s *session) call(ctx context.Context, method string, params, result any) error {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := s.client.Call(cctx, method, params, result); err != nil {
		return fmt.Errorf("calling %s: %w", method, err)
	}
	return nil
}

// writeBlock sends one fs/writeBlock through the harness's fast path, bounded by
// callTimeout.
func (s *session) writeBlock(ctx context.Context, handle string, offset uint64, data []byte) error {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := s.client.WriteBlock(cctx, handle, offset, data); err != nil {
		return fmt.Errorf("calling %s: %w", protocol.MethodFsWriteBlock, err)
	}
	return nil
}

// route runs on the client's read loop: it must not block. Notifications of processes
// or requests nobody waits for are ignored.
func (s *session) route(n harness.Notification) {
	if n.Method == protocol.MethodFsMissingChanged {
		var p protocol.FsMissingChangedNotification
		if n.Unmarshal(&p) == nil {
			select {
			case s.missingChanged <- p.WatchID:
			default:
			}
		}
		return
	}
	if n.Method == protocol.MethodHTTPBodyDelta {
		d := &s.delta
		*d = bodyDelta{Delta: b64JSON{buf: d.Delta.buf[:0]}} // keep the buffer, not its bytes
		if err := n.Unmarshal(d); err != nil {
			return // no handler can be found without a requestId
		}
		s.mu.Lock()
		h := s.bodies[d.RequestID]
		s.mu.Unlock()
		if h != nil {
			h(d)
		}
		return
	}
	id, ok := n.ProcessID()
	if !ok {
		return
	}
	s.mu.Lock()
	h := s.procs[id]
	s.mu.Unlock()
	if h != nil {
		h(n)
	}
}

// onBody registers h for the bodyDelta notifications of requestID until the returned
// function is called. h runs on the client's read loop and must not keep d.
func (s *session) onBody(requestID string, h func(d *bodyDelta)) (unregister func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.bodies[requestID]; dup {
		return nil, fmt.Errorf("request id %q already in use", requestID)
	}
	s.bodies[requestID] = h
	return func() {
		s.mu.Lock()
		delete(s.bodies, requestID)
		s.mu.Unlock()
	}, nil
}

// processOutcome is what one process run produced.
type processOutcome struct {
	exitCode int32
	lastSeq  uint64 // seq of process/closed
	elapsed  time.Duration
}

// errDataLoss marks a sample whose events were missing, duplicated or wrong.
var errDataLoss = errors.New("lost or corrupted data")

// runProcess starts p and waits until it has seen process/closed and every seq from 1 to
// the close seq exactly once (output, exit and close share one counter, spec/jsonrpc.md
// §5.3). harness.ProcessEvents puts the events in seq order; a duplicate or a seq past
// the close is data loss, and a gap still open when ctx ends fails the run. onOutput
// (nil: ignore; run on the client's read loop, must not block) sees each output chunk in
// seq order; an error from it fails the run. elapsed runs from just before process/start
// is sent to the arrival of the last missing event.
func (s *session) runProcess(ctx context.Context, p protocol.ProcessStartParams, onOutput func(protocol.ProcessOutputNotification) error) (processOutcome, error) {
	return s.runEvents(ctx, p, &processRun{onOutput: onOutput})
}

// timeHandle times an fs/open with openParams, body (the handle's blocks) and the fs/close
// of handle.
func (s *session) timeHandle(ctx context.Context, handle string, openParams any, body func() error) (time.Duration, error) {
	start := time.Now()
	if err := s.call(ctx, protocol.MethodFsOpen, openParams, &protocol.FsOpenResult{}); err != nil {
		return 0, err
	}
	if err := body(); err != nil {
		return 0, err
	}
	if err := s.call(ctx, protocol.MethodFsClose, protocol.FsCloseParams{HandleID: handle}, &protocol.FsEmptyResult{}); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// runQuiet runs a process that must print nothing, exit 0 and close at seq 2 (what names
// it in errors: "/bin/true", "sandboxed /bin/true"); it returns runProcess's elapsed.
func (s *session) runQuiet(ctx context.Context, p protocol.ProcessStartParams, what string) (time.Duration, error) {
	out, err := s.runProcess(ctx, p, func(o protocol.ProcessOutputNotification) error {
		return fmt.Errorf("%w: %s printed %d bytes on %s: %.80q", errDataLoss, what, len(o.Chunk), o.Stream, o.Chunk)
	})
	if err != nil {
		return 0, err
	}
	if out.exitCode != 0 || out.lastSeq != 2 {
		return 0, fmt.Errorf("%w: %s exited %d with close seq %d, want 0 and 2", errDataLoss, what, out.exitCode, out.lastSeq)
	}
	return out.elapsed, nil
}

// outputSink checks one process/output notification on the client's read loop (it must
// not block) without decoding its chunk, and returns its seq; an error fails the run (with
// seq 0 the event is not counted either).
type outputSink func(n harness.Notification) (seq uint64, err error)

// runProcessSink is runProcess with the output notifications checked by sink instead of
// decoded.
func (s *session) runProcessSink(ctx context.Context, p protocol.ProcessStartParams, sink outputSink) (processOutcome, error) {
	return s.runEvents(ctx, p, &processRun{sink: sink})
}

// processRun is the state of one runEvents. Its handle runs only on the client's read
// loop, one notification at a time; the fields it writes are read by the waiter after done
// is closed.
type processRun struct {
	onOutput func(protocol.ProcessOutputNotification) error
	sink     outputSink

	pid      string
	events   *harness.ProcessEvents
	batch    []harness.ProcessEvent // scratch of handle
	stripped []byte                 // scratch of strip
	// seqPrefix is {"processId":<pid>,"seq": for strip.
	seqPrefix []byte
	added     uint64 // events of the process handed to events
	exited    bool
	out       processOutcome
	firstErr  error
	done      chan struct{}
	doneAt    time.Time
}

// init prepares r for the process pid.
func (r *processRun) init(pid string) error {
	id, err := json.Marshal(pid)
	if err != nil {
		return fmt.Errorf("encoding process id: %w", err)
	}
	r.seqPrefix = append(append([]byte(`{"processId":`), id...), `,"seq":`...)
	r.pid, r.events = pid, harness.NewProcessEvents(pid)
	r.done = make(chan struct{})
	return nil
}

func (r *processRun) fail(err error) {
	if r.firstErr == nil {
		r.firstErr = err
	}
}

// handle feeds one notification of the process to the ordering and consumes what it
// releases.
func (r *processRun) handle(n harness.Notification) {
	if r.events.Done() {
		// Every seq up to close has arrived, so anything more would be a duplicate or past
		// the close; it cannot be recorded (the waiter may be reading the results now) and
		// cannot hide lost data.
		n.Release()
		return
	}
	if r.sink != nil && n.Method == protocol.MethodProcessOutput {
		seq, err := r.sink(n)
		n.Release()
		if err != nil {
			r.fail(err)
			if seq == 0 {
				return
			}
		}
		n = r.strip(seq)
	}
	// Take, as `executor exec` does: n and each chunk go back to the SDK's pools once
	// consumed (consume keeps no chunk).
	evs, err := r.events.Take(r.batch[:0], n)
	r.batch = evs
	if err != nil {
		r.fail(err)
		return
	}
	r.added++
	for _, ev := range evs {
		r.consume(ev)
		ev.Release()
	}
}

// strip returns a process/output notification of seq with an empty chunk: sink has
// checked the chunk already, and handing the original to ProcessEvents would make it decode
// every chunk on the timed path (the decode stdout_parallel avoids). ProcessEvents does
// not keep the params, so one scratch buffer serves every call.
func (r *processRun) strip(seq uint64) harness.Notification {
	b := append(r.stripped[:0], r.seqPrefix...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, `,"stream":"stdout","chunk":""}`...)
	r.stripped = b
	return harness.Notification{Method: protocol.MethodProcessOutput, Params: b}
}

// consume takes one event in seq order.
func (r *processRun) consume(ev harness.ProcessEvent) {
	switch ev.Kind {
	case harness.EventOutput:
		if r.onOutput != nil {
			if err := r.onOutput(protocol.ProcessOutputNotification{ProcessID: r.pid, Seq: ev.Seq, Stream: ev.Stream, Chunk: ev.Chunk}); err != nil {
				r.fail(err)
			}
		}
	case harness.EventExited:
		if r.exited {
			r.fail(fmt.Errorf("%w: exited again at seq %d", errDataLoss, ev.Seq))
		}
		r.exited, r.out.exitCode = true, ev.ExitCode
	case harness.EventClosed:
		// ProcessEvents dropped duplicates, a seq 0 and seqs past the close silently; each
		// was handed to it, so the count tells.
		if r.added != ev.Seq {
			r.fail(fmt.Errorf("%w: %d events for seqs 1…%d: a seq repeats or is past the close", errDataLoss, r.added, ev.Seq))
		}
		if !r.exited {
			r.fail(fmt.Errorf("%w: closed without exit", errDataLoss))
		}
		r.out.lastSeq = ev.Seq
		r.doneAt = time.Now()
		close(r.done)
	default: // EventGap: synthesized only by session recovery, which bench sessions never do
		r.fail(fmt.Errorf("%w: %s at seq %d", errDataLoss, ev.Kind, ev.Seq))
	}
}

// runEvents starts p and waits until r has seen every event of it (runProcess).
func (s *session) runEvents(ctx context.Context, p protocol.ProcessStartParams, r *processRun) (processOutcome, error) {
	if err := r.init(p.ProcessID); err != nil {
		return processOutcome{}, err
	}
	s.mu.Lock()
	if _, dup := s.procs[p.ProcessID]; dup {
		s.mu.Unlock()
		return processOutcome{}, fmt.Errorf("process id %q already in use", p.ProcessID)
	}
	s.procs[p.ProcessID] = r.handle
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.procs, p.ProcessID)
		s.mu.Unlock()
	}()

	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	_, err := s.client.StartProcess(cctx, p)
	cancel()
	// Until done is closed the handler may be writing r concurrently, so the early returns
	// below must not read it.
	if err != nil {
		return processOutcome{}, fmt.Errorf("starting %s: %w", p.ProcessID, err)
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		return processOutcome{}, fmt.Errorf("waiting for all events of %s: %w", p.ProcessID, ctx.Err())
	case <-s.client.Done():
		return processOutcome{}, fmt.Errorf("waiting for all events of %s: connection ended: %w", p.ProcessID, s.client.Err())
	}
	out := r.out
	out.elapsed = r.doneAt.Sub(start)
	if r.firstErr != nil {
		return out, fmt.Errorf("process %s: %w", p.ProcessID, r.firstErr)
	}
	return out, nil
}
