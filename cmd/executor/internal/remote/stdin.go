package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// Stdin after start-up (spec/registry-auth.md §11.1, §12; observed from codex 0.169.0):
//
//   - --executor-credential-stdin: stdin carries rotating credential frames until EOF; EOF
//     before start-up completes fails with "exec-server executor credential pipe closed"
//     (exit 1), EOF later stops the executor (exit 0), a rejected frame fails at once (exit 1).
//   - --exit-on-stdin-close: stdin is read (after any one-line credential) and discarded; EOF
//     stops the executor (exit 0).
//   - otherwise nothing reads stdin after the one-line credential, so EOF is ignored.

// errStdinEOF ends a drained stdin (--exit-on-stdin-close).
var errStdinEOF = errors.New("stdin closed")

// errStdinStopped is how the pump's reader fails when stopPump interrupts it.
var errStdinStopped = errors.New("stdin reader stopped")

// stdinPump owns the one goroutine that reads stdin after start-up. The goroutine runs read
// until it returns, then reports the result through done/err and onDone. stop interrupts
// the read and waits for the goroutine, except on a stdin that cannot be interrupted (a
// terminal): that goroutine stays blocked in read(2) until the process exits, which happens
// right after stop.
type stdinPump struct {
	done      chan struct{}
	err       error // why read returned; written before done is closed
	interrupt func()
	waitable  bool
	cleanup   func()
}

// stdinSource is stdin prepared for a pump: r fails promptly once interrupt is called when
// waitable is true; cleanup runs after the reader goroutine is gone.
type stdinSource struct {
	r         io.Reader
	interrupt func()
	waitable  bool
	cleanup   func()
}

// prepareStdin makes stdin interruptible where it can: an io.PipeReader or other io.Closer
// (tests) is closed; a pipe or socket *os.File is re-opened non-blocking on the runtime
// poller (see stdin_unix.go). A terminal or other file is read as is.
func prepareStdin(r io.Reader) stdinSource {
	noop := func() {}
	switch v := r.(type) {
	case nil:
		return stdinSource{r: eofReader{}, interrupt: noop, waitable: true, cleanup: noop}
	case *os.File:
		if s, ok := pollableStdin(v); ok {
			return s
		}
		return stdinSource{r: v, interrupt: noop, cleanup: noop}
	case *io.PipeReader:
		return stdinSource{r: v, interrupt: func() { v.CloseWithError(errStdinStopped) }, waitable: true, cleanup: noop}
	case io.Closer:
		return stdinSource{r: r, interrupt: func() { v.Close() }, waitable: true, cleanup: noop}
	}
	return stdinSource{r: r, interrupt: noop, cleanup: noop}
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// startStdinPump starts the reader goroutine: read(r) runs until it returns; then onDone is
// called with its error (from that goroutine) and done is closed.
func startStdinPump(src stdinSource, r io.Reader, read func(io.Reader) error, onDone func(error)) *stdinPump {
	p := &stdinPump{done: make(chan struct{}), interrupt: src.interrupt, waitable: src.waitable, cleanup: src.cleanup}
	go func() { // owner: the stdinPump; stop interrupts and waits for it
		defer close(p.done)
		p.err = read(r)
		onDone(p.err)
	}()
	return p
}

// stop interrupts the reader and waits for it (see stdinPump). Safe on a nil pump.
func (p *stdinPump) stop() {
	if p == nil {
		return
	}
	p.interrupt()
	if !p.waitable {
		return
	}
	<-p.done
	p.cleanup()
}

// stdinReader is stdin for the whole command: Lines serves the one-line credentials read at
// start-up, and, when stdin must be read after start-up (credential frames or
// --exit-on-stdin-close), it is prepared for a pump reading through the same buffer. One
// stdinReader belongs to one RunCommand, which calls close on every return path.
type stdinReader struct {
	lines    *bufio.Reader
	src      stdinSource // zero unless prepared
	prepared bool
	pump     *stdinPump // nil until startPump
}

// openStdin wraps stdin (nil reads as empty). keep prepares it for a pump.
func openStdin(stdin io.Reader, keep bool) *stdinReader {
	if stdin == nil {
		stdin = eofReader{}
	}
	if !keep {
		return &stdinReader{lines: bufio.NewReader(stdin)}
	}
	src := prepareStdin(stdin)
	return &stdinReader{lines: bufio.NewReader(src.r), src: src, prepared: true}
}

// startPump starts the one reader goroutine: read(r) with r the raw prepared stdin (raw)
// or what follows the start-up lines (!raw). It must be called at most once, on a
// prepared stdinReader.
func (s *stdinReader) startPump(raw bool, read func(io.Reader) error, onDone func(error)) {
	r := io.Reader(s.lines)
	if raw {
		r = s.src.r
	}
	s.pump = startStdinPump(s.src, r, read, onDone)
}

// close stops the pump (waiting for it where stdin can be interrupted) or, when none was
// started, releases the prepared stdin.
func (s *stdinReader) close() {
	switch {
	case s.pump != nil:
		s.pump.stop()
	case s.prepared:
		s.src.cleanup()
	}
}

// drainStdin reads r to its end (--exit-on-stdin-close) and reports errStdinEOF; a read
// error counts as closed too.
func drainStdin(r io.Reader) error {
	if _, err := io.Copy(io.Discard, r); err != nil {
		return fmt.Errorf("reading stdin: %w", err)
	}
	return errStdinEOF
}

// stdinOutcome maps why runCtx (a child of ctx cancelled by the pump) ended to the process
// outcome: ok is false when the pump did not end it; otherwise err is nil for EOF (exit 0)
// or the credential error (exit 1).
func stdinOutcome(ctx, runCtx context.Context) (err error, ok bool) {
	if ctx.Err() != nil || runCtx.Err() == nil {
		return nil, false
	}
	cause := context.Cause(runCtx)
	if errors.Is(cause, errStdinEOF) {
		return nil, true
	}
	return cause, true
}
