package refbin

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The launcher: start a binary (ours or a reference release), wait for the stdout line
// that tells where it listens, and stop it at cleanup with SIGTERM, then SIGKILL.

// Launcher defaults (implementation choices, generous for a loaded 2-core CI machine).
const (
	// DefaultLineTimeout is how long Launch waits for the awaited stdout line.
	DefaultLineTimeout = 30 * time.Second
	// DefaultStopTimeout is how long Stop waits after SIGTERM before SIGKILL.
	DefaultStopTimeout = 5 * time.Second
	// readerGrace is how long Stop waits, once the process is gone, for its stdout to
	// reach EOF before closing the pipe under a grandchild that may still hold it.
	readerGrace = time.Second
	// maxOutput bounds the output a Proc keeps for failure logs (bytes, the first ones).
	maxOutput = 1 << 20
)

// URLLine matches a stdout line that is a listen URL (`ws://127.0.0.1:P`,
// `http://127.0.0.1:P`, and their TLS forms), surrounding blanks trimmed: what
// `exec-server --listen`, `executor serve` and `executor registry serve` print.
var URLLine = regexp.MustCompile(`^(?:ws|wss|http|https)://\S+$`)

// LaunchOptions configures Launch and StartProc. nil means every default; the struct is
// not modified.
type LaunchOptions struct {
	// Line is the stdout line to wait for (surrounding blanks trimmed); nil means URLLine.
	Line *regexp.Regexp
	// NoLine makes Launch return as soon as the process has started, without waiting for
	// a line (AwaitLine can wait for it later).
	NoLine bool
	// LineTimeout bounds the wait for Line; 0 means DefaultLineTimeout.
	LineTimeout time.Duration
	// Stdin, when not empty, is written to the process's stdin, which then stays open
	// until Stop (stdin EOF may mean "exit" to an executor). Empty leaves cmd.Stdin alone.
	Stdin string
	// StopTimeout is how long Stop waits after SIGTERM before SIGKILL; 0 means
	// DefaultStopTimeout.
	StopTimeout time.Duration
	// Kill makes Stop send SIGKILL at once instead of SIGTERM: for a server whose shutdown
	// is not under test, where a graceful exit only costs time (a released exec-server
	// takes about a second to exit on SIGTERM). Exit checks then see the kill.
	Kill bool
	// Exit is what Launch's cleanup requires of the process's end; the zero value requires
	// nothing.
	Exit ExitCheck
	// Tee, when non-nil, also receives everything the Proc keeps (stdout lines and
	// stderr), for a test that waits on the output. It must be safe for concurrent use.
	Tee io.Writer
	// Name names the process in messages; empty means the base name of cmd.Path.
	Name string
}

// ExitCheck says what Launch's cleanup requires when it stops the process.
type ExitCheck int

const (
	// ExitAny requires nothing.
	ExitAny ExitCheck = iota
	// ExitOnSIGTERM fails the test when the process ignores SIGTERM for StopTimeout.
	ExitOnSIGTERM
	// ExitClean fails the test unless the process exits with status 0 after SIGTERM
	// within StopTimeout.
	ExitClean
)

// ErrIgnoredSIGTERM is wrapped by Stop's error when the process outlived SIGTERM by
// StopTimeout and was killed.
var ErrIgnoredSIGTERM = errors.New("ignored SIGTERM")

func (o *LaunchOptions) withDefaults(cmd *exec.Cmd) LaunchOptions {
	var c LaunchOptions
	if o != nil {
		c = *o
	}
	if c.Line == nil {
		c.Line = URLLine
	}
	if c.LineTimeout <= 0 {
		c.LineTimeout = DefaultLineTimeout
	}
	if c.StopTimeout <= 0 {
		c.StopTimeout = DefaultStopTimeout
	}
	if c.Name == "" {
		c.Name = cmd.Path[strings.LastIndexByte(cmd.Path, '/')+1:]
	}
	return c
}

// Proc is a process started by Launch or StartProc. Its stdout lines and its stderr (also
// written to cmd.Stderr when the caller set one) are kept, up to 1 MiB, for Output. Safe
// for concurrent use.
type Proc struct {
	// Cmd is the started command; use it for the pid or a signal, never for Wait.
	Cmd *exec.Cmd
	// Match is the awaited line's submatches (Match[0] the trimmed line); nil until the
	// line came (Launch without NoLine, or AwaitLine).
	Match []string

	opts   LaunchOptions
	out    *LockedBuffer
	stdout *os.File       // the read end of the stdout pipe; closed by the reader
	stdin  io.WriteCloser // nil unless opts.Stdin was written
	lines  chan []string  // the first matching line; closed at stdout EOF
	read   chan struct{}  // closed when the stdout reader has returned
	done   chan struct{}  // closed when Wait has returned; waitErr is set before
	waitEr error
	stop   sync.Once
	stopEr error
}

// URL is the awaited line (Match[0]): the listen URL with the default Line.
func (p *Proc) URL() string {
	if len(p.Match) == 0 {
		return ""
	}
	return p.Match[0]
}

// Output returns what the process has written so far (see Proc).
func (p *Proc) Output() string { return p.out.String() }

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Launch starts cmd, waits for its Line on stdout (unless NoLine) and returns the process;
// a failure to start, an exit before the line or LineTimeout fails tb with the output so
// far. Cleanup stops the process (Stop), fails tb when CleanExit asks for a clean exit
// that did not happen, and logs the output when tb has failed.
func Launch(tb testing.TB, cmd *exec.Cmd, o *LaunchOptions) *Proc {
	tb.Helper()
	p, err := StartProc(cmd, o)
	if err != nil {
		tb.Fatalf("starting %s: %v", cmd.Path, err)
	}
	tb.Cleanup(func() {
		err := p.Stop()
		if err != nil && (p.opts.Exit == ExitClean || p.opts.Exit == ExitOnSIGTERM && errors.Is(err, ErrIgnoredSIGTERM)) {
			tb.Errorf("%s: %v", p.opts.Name, err)
		}
		if tb.Failed() {
			tb.Logf("%s output:\n%s", p.opts.Name, p.Output())
		}
	})
	if p.opts.NoLine {
		return p
	}
	if err := p.awaitLine(); err != nil {
		tb.Fatalf("%s: %v (output %s)", p.opts.Name, err, p.Output())
	}
	return p
}

// StartProc is Launch for callers without a testing.TB (a server shared by a whole test
// binary): it returns an error instead of failing, and the caller must call Stop.
func StartProc(cmd *exec.Cmd, o *LaunchOptions) (*Proc, error) {
	p := &Proc{Cmd: cmd, opts: o.withDefaults(cmd), out: &LockedBuffer{Max: maxOutput, tee: o.tee()},
		lines: make(chan []string, 1), read: make(chan struct{}), done: make(chan struct{})}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("making the stdout pipe: %w", err)
	}
	// Our own pipe, not StdoutPipe: Wait then returns at the process's exit even when a
	// grandchild still holds stdout, and the reader never races Wait's close.
	cmd.Stdout = pw
	if cmd.Stderr == nil {
		cmd.Stderr = p.out
	} else {
		cmd.Stderr = io.MultiWriter(cmd.Stderr, p.out) // the caller's, and ours for Output
	}
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = p.opts.StopTimeout // bounds the stderr copy under a lingering grandchild
	}
	if p.opts.Stdin != "" {
		if p.stdin, err = cmd.StdinPipe(); err != nil {
			pr.Close()
			pw.Close()
			return nil, fmt.Errorf("making the stdin pipe: %w", err)
		}
	}
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, err
	}
	pw.Close()
	p.stdout = pr
	go p.readStdout() // owner: p; ends at stdout EOF or when Stop closes the pipe
	go func() {       // owner: p; ends at the process's exit
		p.waitEr = cmd.Wait()
		close(p.done)
	}()
	if p.stdin != nil {
		if _, err := io.WriteString(p.stdin, p.opts.Stdin); err != nil {
			_ = p.Stop()
			return nil, fmt.Errorf("writing stdin: %w", err)
		}
	}
	return p, nil
}

// readStdout keeps every stdout line in out and hands the first one matching Line over.
func (p *Proc) readStdout() {
	defer close(p.read)
	defer p.stdout.Close()
	defer close(p.lines)
	sc := bufio.NewScanner(p.stdout)
	sc.Buffer(make([]byte, 64<<10), maxOutput)
	sent := false
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(p.out, line)
		if sent {
			continue
		}
		if m := p.opts.Line.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			p.lines <- m
			sent = true
		}
	}
}

// awaitLine waits for the first matching line and sets Match.
func (p *Proc) awaitLine() error {
	t := time.NewTimer(p.opts.LineTimeout)
	defer t.Stop()
	select {
	case m, ok := <-p.lines:
		if !ok {
			select {
			case <-p.done:
				return fmt.Errorf("exited (%v) before printing a line matching %s", p.waitEr, p.opts.Line)
			case <-t.C:
				return fmt.Errorf("closed stdout without printing a line matching %s", p.opts.Line)
			}
		}
		p.Match = m
		return nil
	case <-t.C:
		return fmt.Errorf("printed no line matching %s within %v", p.opts.Line, p.opts.LineTimeout)
	}
}

// AwaitLine waits (at most LineTimeout) for the Line, sets Match and returns it: for
// StartProc's callers and after Launch with NoLine. Not safe for concurrent use.
func (p *Proc) AwaitLine() ([]string, error) {
	if err := p.awaitLine(); err != nil {
		return nil, err
	}
	return p.Match, nil
}

// Stop ends the process: SIGTERM (SIGKILL with Kill), then SIGKILL after StopTimeout; then
// it closes stdin and
// waits for the stdout reader. It returns nil when the process exited with status 0 after
// SIGTERM within StopTimeout (or had already exited so), an error saying what happened
// otherwise. Only the first call acts; later calls return its result.
func (p *Proc) Stop() error {
	p.stop.Do(func() {
		if p.opts.Kill {
			_ = p.Cmd.Process.Kill()
		} else {
			_ = p.Cmd.Process.Signal(syscall.SIGTERM)
		}
		t := time.NewTimer(p.opts.StopTimeout)
		select {
		case <-p.done:
			if p.waitEr != nil {
				p.stopEr = fmt.Errorf("exited with %v after SIGTERM, want status 0", p.waitEr)
			}
		case <-t.C:
			_ = p.Cmd.Process.Kill()
			<-p.done
			p.stopEr = fmt.Errorf("%w for %v; killed it", ErrIgnoredSIGTERM, p.opts.StopTimeout)
		}
		t.Stop()
		if p.stdin != nil {
			p.stdin.Close()
		}
		select {
		case <-p.read:
		case <-time.After(readerGrace):
			p.closeStdout() // a grandchild holds stdout: stop reading it
			<-p.read
		}
	})
	return p.stopEr
}

// closeStdout unblocks the reader (os.Pipe files use the poller, so Close interrupts Read).
func (p *Proc) closeStdout() { _ = p.stdout.Close() }

// LockedBuffer is a bytes buffer safe for concurrent Write and String: a child's output
// collected while the test reads it. The zero value keeps everything.
type LockedBuffer struct {
	// Max, when positive, is how many bytes are kept (the first ones); the rest is
	// counted, not kept. A Proc's output keeps 1 MiB.
	Max int

	mu      sync.Mutex // guards b and dropped: the child's copy goroutine writes, the test reads
	b       []byte
	dropped int
	tee     io.Writer // also gets every write, whole; nil for none
}

func (o *LaunchOptions) tee() io.Writer {
	if o == nil {
		return nil
	}
	return o.Tee
}

// Write keeps p (up to the bound) and never fails.
func (l *LockedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if l.tee != nil {
		_, _ = l.tee.Write(p)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := max(l.Max-len(l.b), 0); l.Max > 0 && room < len(p) {
		l.dropped += len(p) - room
		p = p[:room]
	}
	l.b = append(l.b, p...)
	return n, nil
}

// String returns what was kept, with a note of what was dropped.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dropped > 0 {
		return string(l.b) + fmt.Sprintf("\n[%d more bytes not kept]", l.dropped)
	}
	return string(l.b)
}
