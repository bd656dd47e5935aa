package bench

import (
	"context"
	"errors"
	"fmt"
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
}

func newSession() *session {
	return &session{procs: map[string]func(harness.Notification){}, bodies: map[string]func(*bodyDelta){}}
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
	s := newSession()
	dctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	c, err := harness.Dial(dctx, &harness.RemoteOptions{
		Registry: registryURL, EnvironmentID: env, Token: token,
		Client: &harness.Options{OnNotification: s.route},
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

// route runs on the client's read loop: it must not block. Notifications of processes
// or requests nobody waits for are ignored.
func (s *session) route(n harness.Notification) {
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
	// reordered counts events that arrived after an event with a higher seq. The
	// reference assigns seqs under its process lock but sends from separate tasks, so its
	// process/exited can trail later output (observed from codex 0.169.0).
	reordered int
}

// errDataLoss marks a sample whose events were missing, duplicated or wrong.
var errDataLoss = errors.New("lost or corrupted data")

// runProcess starts p and waits until it has seen process/closed and every seq from 1 to
// the close seq exactly once (output, exit and close share one counter, spec/jsonrpc.md
// §5.3). Events may arrive out of seq order; a duplicate, a seq past the close, or a gap
// that is still open when ctx ends is data loss. onOutput (run on the client's read loop,
// must not block) sees each output chunk; an error from it fails the run. elapsed runs
// from just before process/start is sent to the arrival of the last missing event.
func (s *session) runProcess(ctx context.Context, p protocol.ProcessStartParams, onOutput func(protocol.ProcessOutputNotification) error) (processOutcome, error) {
	return s.runProcessSink(ctx, p, decodedOutput(onOutput))
}

// outputSink consumes one process/output notification on the client's read loop (it must
// not block) and returns its seq; an error fails the run (with seq 0 the event is not
// counted either).
type outputSink func(n harness.Notification) (seq uint64, err error)

// decodedOutput is the sink of runProcess: the harness decodes each chunk and onOutput
// (nil: ignore) sees it.
func decodedOutput(onOutput func(protocol.ProcessOutputNotification) error) outputSink {
	return func(n harness.Notification) (uint64, error) {
		o, err := n.ProcessOutput()
		if err != nil {
			return 0, err
		}
		if onOutput != nil {
			err = onOutput(o)
		}
		return o.Seq, err
	}
}

// runProcessSink is runProcess with the output notifications handed to sink.
func (s *session) runProcessSink(ctx context.Context, p protocol.ProcessStartParams, sink outputSink) (processOutcome, error) {
	var (
		out      processOutcome
		firstErr error
		seen     = map[uint64]bool{}
		maxSeq   uint64
		exited   bool
		closeSeq uint64
		finished bool
		done     = make(chan struct{})
		doneAt   time.Time
	)
	fail := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	// The handler runs only on the read loop, one notification at a time; the variables
	// it writes are read by this goroutine after done is closed.
	handler := func(n harness.Notification) {
		if finished {
			// Every seq up to close has arrived, so anything more would be a duplicate or
			// past the close; it cannot be recorded (the waiter may be reading the results
			// now) and cannot hide lost data.
			return
		}
		var seq uint64
		switch n.Method {
		case protocol.MethodProcessOutput:
			var err error
			seq, err = sink(n)
			if err != nil {
				fail(err)
				if seq == 0 {
					return
				}
			}
		case protocol.MethodProcessExited:
			x, err := n.ProcessExited()
			if err != nil {
				fail(err)
				return
			}
			seq, exited, out.exitCode = x.Seq, true, x.ExitCode
		case protocol.MethodProcessClosed:
			x, err := n.ProcessClosed()
			if err != nil {
				fail(err)
				return
			}
			seq, closeSeq = x.Seq, x.Seq
		default:
			return
		}
		switch {
		case seq == 0 || seen[seq]:
			fail(fmt.Errorf("%w: %s repeats seq %d", errDataLoss, n.Method, seq))
		case closeSeq != 0 && seq > closeSeq:
			fail(fmt.Errorf("%w: %s seq %d after close seq %d", errDataLoss, n.Method, seq, closeSeq))
		}
		seen[seq] = true
		if seq < maxSeq {
			out.reordered++
		}
		maxSeq = max(maxSeq, seq)
		if closeSeq != 0 && uint64(len(seen)) == closeSeq {
			if !exited {
				fail(fmt.Errorf("%w: closed without exit", errDataLoss))
			}
			out.lastSeq = closeSeq
			doneAt = time.Now()
			finished = true
			close(done)
		}
	}
	s.mu.Lock()
	if _, dup := s.procs[p.ProcessID]; dup {
		s.mu.Unlock()
		return processOutcome{}, fmt.Errorf("process id %q already in use", p.ProcessID)
	}
	s.procs[p.ProcessID] = handler
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
	// Until done is closed the handler may be writing out and firstErr concurrently, so
	// the early returns below must not read them.
	if err != nil {
		return processOutcome{}, fmt.Errorf("starting %s: %w", p.ProcessID, err)
	}
	select {
	case <-done:
	case <-ctx.Done():
		return processOutcome{}, fmt.Errorf("waiting for all events of %s: %w", p.ProcessID, ctx.Err())
	case <-s.client.Done():
		return processOutcome{}, fmt.Errorf("waiting for all events of %s: connection ended: %w", p.ProcessID, s.client.Err())
	}
	out.elapsed = doneAt.Sub(start)
	if firstErr != nil {
		return out, fmt.Errorf("process %s: %w", p.ProcessID, firstErr)
	}
	return out, nil
}
