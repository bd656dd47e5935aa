package execcli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
)

// Config configures Run. Either Registry (with EnvironmentID and Token) or URL is set.
type Config struct {
	Registry      string
	EnvironmentID string
	Token         string // bearer for connect; never logged
	URL           string // ws:// of `executor serve`
	// AuthBearerToken is sent on the URL's upgrade (listener --ws-auth); never logged.
	AuthBearerToken string

	Argv        []string
	TTY         bool
	Interactive bool   // forward stdin (pipeStdin)
	Cwd         string // native path on the executor host; "" = the executor's default
	Env         map[string]string

	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// StdinFD is the terminal to put in raw mode with TTY (-1: none).
	StdinFD int
	// Signals, when non-nil, replaces os/signal delivery of SIGINT (tests).
	Signals <-chan os.Signal
	Logger  *slog.Logger
}

// ExitError carries the remote process's exit code.
type ExitError struct{ Code int }

func (e *ExitError) Error() string {
	return fmt.Sprintf("remote process exited with status %d", e.Code)
}

// Run executes cfg.Argv remotely and returns nil for exit code 0, *ExitError for others,
// or the error that stopped it.
func Run(ctx context.Context, cfg Config) error {
	if len(cfg.Argv) == 0 {
		return errors.New("exec: no command given")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	copts := &harness.Options{Logger: log}
	var c *harness.Client
	var err error
	if cfg.URL != "" {
		lopts := *copts
		lopts.AuthBearerToken = cfg.AuthBearerToken
		c, err = harness.DialLocal(ctx, cfg.URL, &lopts)
	} else {
		c, err = harness.Dial(ctx, &harness.RemoteOptions{
			Registry: cfg.Registry, EnvironmentID: cfg.EnvironmentID, Token: cfg.Token,
			Client: copts,
			OnReconnect: func(done bool, err error) {
				switch {
				case !done:
					fmt.Fprintln(cfg.Stderr, "executor exec: connection to the executor lost; reconnecting")
				case err == nil:
					fmt.Fprintln(cfg.Stderr, "executor exec: reconnected")
				default:
					fmt.Fprintf(cfg.Stderr, "executor exec: reconnecting failed: %v\n", err)
				}
			},
		})
	}
	if err != nil {
		return err
	}
	defer c.Close()
	init, err := c.Initialize(ctx, "executor-exec", "")
	if err != nil {
		return err
	}
	cwd := protocol.FromNative("/")
	switch {
	case cfg.Cwd != "":
		cwd = protocol.FromNative(cfg.Cwd)
	case init.EnvironmentInfo.Cwd != nil:
		cwd = *init.EnvironmentInfo.Cwd
	case init.EnvironmentInfo.UserHomeDir != "":
		cwd = init.EnvironmentInfo.UserHomeDir
	}
	env := map[string]string{}
	for k, v := range cfg.Env {
		env[k] = v
	}
	if cfg.TTY {
		if _, ok := env["TERM"]; !ok {
			env["TERM"] = envOr("TERM", "xterm-256color")
		}
	}
	pid := "exec-" + randomHex(8)
	if cfg.TTY && cfg.StdinFD >= 0 {
		restore, err := makeRaw(cfg.StdinFD)
		if err == nil {
			defer restore()
		}
	}
	if _, err := c.StartProcess(ctx, protocol.ProcessStartParams{
		ProcessID: pid, Argv: cfg.Argv, Cwd: cwd, Env: env, Tty: cfg.TTY,
		PipeStdin: cfg.Interactive || cfg.TTY,
		EnvPolicy: &protocol.ExecEnvPolicy{Inherit: protocol.EnvInheritAll, Exclude: []string{}, Set: env, IncludeOnly: []string{}},
	}); err != nil {
		return fmt.Errorf("starting %s: %w", cfg.Argv[0], err)
	}

	// Helpers live for the process's lifetime; wg waits for them before returning.
	hctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	if cfg.Interactive || cfg.TTY {
		wg.Add(1)
		go func() { defer wg.Done(); pumpStdin(hctx, c, pid, cfg.Stdin) }()
	}
	sigs := cfg.Signals
	if sigs == nil && !cfg.TTY {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGINT)
		defer signal.Stop(ch)
		sigs = ch
	}
	if sigs != nil {
		wg.Add(1)
		go func() { defer wg.Done(); forwardSignals(hctx, c, pid, sigs) }()
	}
	return stream(ctx, c, pid, cfg.Stdout, cfg.Stderr)
}

// stream writes the process's output in seq order until process/closed and returns its
// exit status. Events are applied in seq order: the reference sends exit and close from
// separate tasks, so they can overtake output notifications.
func stream(ctx context.Context, c *harness.Client, pid string, stdout, stderr io.Writer) error {
	exit := -1
	next := uint64(1)
	pending := map[uint64]event{}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case n, ok := <-c.Notifications():
			if !ok {
				if err := c.Err(); err != nil {
					return err
				}
				return harness.ErrClosed
			}
			if id, _ := n.ProcessID(); id != pid {
				continue
			}
			ev, err := decodeEvent(n)
			if err != nil {
				return err
			}
			if ev.seq < next {
				continue
			}
			pending[ev.seq] = ev
			for {
				ev, ok := pending[next]
				if !ok {
					break
				}
				delete(pending, next)
				next++
				switch ev.method {
				case protocol.MethodProcessOutput:
					w := stdout
					if ev.stream == protocol.StreamStderr {
						w = stderr
					}
					if _, err := w.Write(ev.chunk); err != nil {
						return fmt.Errorf("writing output: %w", err)
					}
				case protocol.MethodProcessExited:
					exit = ev.exitCode
				case protocol.MethodProcessClosed:
					switch {
					case exit == 0:
						return nil
					case exit < 0:
						return &ExitError{Code: 1}
					}
					return &ExitError{Code: exit}
				}
			}
		}
	}
}

// event is one decoded process notification.
type event struct {
	method   string
	seq      uint64
	stream   protocol.ExecOutputStream
	chunk    []byte
	exitCode int
}

// decodeEvent decodes a process/* notification once.
func decodeEvent(n harness.Notification) (event, error) {
	ev := event{method: n.Method}
	switch n.Method {
	case protocol.MethodProcessOutput:
		out, err := n.ProcessOutput()
		ev.seq, ev.stream, ev.chunk = out.Seq, out.Stream, out.Chunk
		return ev, err
	case protocol.MethodProcessExited:
		x, err := n.ProcessExited()
		ev.seq, ev.exitCode = x.Seq, int(x.ExitCode)
		return ev, err
	case protocol.MethodProcessClosed:
		x, err := n.ProcessClosed()
		ev.seq = x.Seq
		return ev, err
	}
	return ev, fmt.Errorf("unexpected notification %s", n.Method)
}

// pumpStdin forwards local stdin as process/write calls, one writeId per chunk.
func pumpStdin(ctx context.Context, c *harness.Client, pid string, r io.Reader) {
	if r == nil {
		return
	}
	buf := make([]byte, 32<<10)
	for n := 0; ; n++ {
		k, err := r.Read(buf)
		if k > 0 {
			chunk := append([]byte(nil), buf[:k]...)
			if _, werr := c.WriteProcess(ctx, pid, fmt.Sprintf("stdin-%d", n), chunk); werr != nil {
				return
			}
		}
		if err != nil || ctx.Err() != nil {
			return
		}
	}
}

// forwardSignals turns each SIGINT into process/signal{interrupt}.
func forwardSignals(ctx context.Context, c *harness.Client, pid string, sigs <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-sigs:
			_ = c.SignalProcess(ctx, pid, protocol.SignalInterrupt)
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
