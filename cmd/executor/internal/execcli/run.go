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
	"sync"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
)

// Config configures Run. Either Registry (with EnvironmentID and Token) or URL is set.
// Run never mutates it.
type Config struct {
	Registry      string
	EnvironmentID string
	// Trace traces each connection attempt through the registry and sends its
	// traceparent (harness.RemoteOptions.Trace). Nil: tracing off.
	Trace func(ctx context.Context) (traceparent string, end func(error))
	Token string // bearer for connect; never logged
	URL   string // ws:// of `executor serve`
	// AuthBearerToken is sent on the URL's upgrade (listener --ws-auth); never logged.
	AuthBearerToken string

	// Argv is the remote command. Empty: the remote user's login shell (environment/info
	// shell, run with -l) in the user's home directory, with stdin forwarded (Interactive
	// is implied), as ssh does without a command.
	Argv        []string
	TTY         bool   // run in a remote PTY (the caller applies ssh's -t/-T/auto rule)
	Interactive bool   // forward stdin (pipeStdin); EOF is forwarded when the executor can
	Cwd         string // native path on the executor host; "" = the executor's default
	Env         map[string]string

	// Stdin is forwarded with -i/-t. An *os.File is read so that Run can stop the read
	// when the command ends (Linux); any other reader must end on its own (it is waited
	// for).
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// StdinFD is the local terminal put in raw mode with TTY and whose size the remote
	// PTY takes (-1: none).
	StdinFD int
	// StdoutFD is a terminal whose size the remote PTY takes when StdinFD is not one
	// (-1: none).
	StdoutFD int
	// ReconnectTimeout bounds one session recovery through a registry (harness
	// RemoteOptions.RecoveryTimeout): attempts back off up to 5 s, the last one starts at
	// the deadline. Zero means the SDK's default (25 s); the command sets 10 min.
	ReconnectTimeout time.Duration

	// Signals, when non-nil, replaces os/signal delivery of SIGINT, SIGTERM, SIGHUP,
	// SIGQUIT and SIGWINCH (tests).
	Signals <-chan os.Signal
	Logger  *slog.Logger
}

// ExitError carries the remote process's exit code (or 128+N when Run gave up after a
// local signal N it could not forward).
type ExitError struct{ Code int }

func (e *ExitError) Error() string {
	return fmt.Sprintf("remote process exited with status %d", e.Code)
}

// runner is one Run: the connection, the remote process and the local terminal.
type runner struct {
	cfg  Config
	c    *harness.Client
	caps protocol.Capabilities
	pid  string
	tty  bool
	term *terminal
	out  *notes
	log  *slog.Logger

	// cancel ends the output stream with a cause (a signal that could not be forwarded).
	cancel context.CancelCauseFunc
}

// Run executes cfg.Argv remotely and returns nil for exit code 0, *ExitError for others,
// or the error that stopped it. The local terminal is restored on every return, also
// when Run or one of its goroutines panics.
func Run(ctx context.Context, cfg Config) (err error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &runner{cfg: cfg, tty: cfg.TTY, term: &terminal{fd: -1}, log: log}
	r.out = &notes{w: cfg.Stderr, term: r.term}
	defer r.term.restore()

	copts := &harness.Options{Logger: log}
	if cfg.URL != "" {
		lopts := *copts
		lopts.AuthBearerToken = cfg.AuthBearerToken
		r.c, err = harness.DialLocal(ctx, cfg.URL, &lopts)
	} else {
		r.c, err = harness.Dial(ctx, &harness.RemoteOptions{
			Registry: cfg.Registry, EnvironmentID: cfg.EnvironmentID, Token: cfg.Token,
			Client: copts, RecoveryTimeout: cfg.ReconnectTimeout, Trace: cfg.Trace,
			OnReconnect: func(done bool, err error) {
				switch {
				case !done:
					r.out.printf("executor exec: connection to the executor lost; reconnecting\n")
				case err == nil:
					r.out.printf("executor exec: reconnected\n")
				default:
					r.out.printf("executor exec: reconnecting failed: %v\n", err)
				}
			},
		})
	}
	if err != nil {
		return err
	}
	defer r.c.Close()
	init, err := r.c.Initialize(ctx, "executor-exec", "")
	if err != nil {
		return err
	}
	r.caps = r.c.Capabilities()
	params, err := r.startParams(init.EnvironmentInfo)
	if err != nil {
		return err
	}
	if r.tty && cfg.StdinFD >= 0 {
		if err := r.term.makeRaw(cfg.StdinFD); err != nil {
			log.Debug("raw mode unavailable", "error", err)
		}
	}
	// Signals are caught from before the start, so none is lost to the default action.
	sigs, stopSignals := r.signals()
	defer stopSignals()
	if _, err := r.c.StartProcess(ctx, params); err != nil {
		return fmt.Errorf("starting %s: %w", params.Argv[0], err)
	}

	// Helpers live for the process's lifetime; wg waits for them before returning.
	hctx, stop := context.WithCancel(ctx)
	sctx, cancel := context.WithCancelCause(ctx)
	r.cancel = cancel
	var wg sync.WaitGroup
	defer func() { stop(); cancel(nil); wg.Wait() }()
	if params.PipeStdin || params.Tty {
		if err := r.startStdin(hctx, &wg); err != nil {
			return err
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer r.term.restoreOnPanic()
		r.forwardSignals(hctx, sigs)
	}()
	return stream(sctx, r.c, r.pid, cfg.Stdout, cfg.Stderr, r.out)
}

// startParams builds process/start: the command (or the login shell), its cwd and
// environment, and the PTY size when the executor takes one.
func (r *runner) startParams(info *protocol.EnvironmentInfo) (protocol.ProcessStartParams, error) {
	cfg := &r.cfg
	if info == nil {
		info = &protocol.EnvironmentInfo{}
	}
	argv, interactive := cfg.Argv, cfg.Interactive
	loginShell := len(argv) == 0
	if loginShell {
		if info.Shell.Path == "" {
			return protocol.ProcessStartParams{}, errors.New("no command given and the executor reports no shell")
		}
		argv, interactive = loginShellArgv(info.Shell), true
	}
	cwd := protocol.FromNative("/")
	switch {
	case cfg.Cwd != "":
		cwd = protocol.FromNative(cfg.Cwd)
	case loginShell && info.UserHomeDir != "":
		cwd = info.UserHomeDir
	case info.Cwd != nil:
		cwd = *info.Cwd
	case info.UserHomeDir != "":
		cwd = info.UserHomeDir
	}
	env := map[string]string{}
	for k, v := range cfg.Env {
		env[k] = v
	}
	if r.tty {
		if _, ok := env["TERM"]; !ok {
			env["TERM"] = envOr("TERM", "xterm-256color")
		}
	}
	r.pid = "exec-" + randomHex(8)
	p := protocol.ProcessStartParams{
		ProcessID: r.pid, Argv: argv, Cwd: cwd, Env: env, Tty: r.tty,
		PipeStdin: interactive || r.tty,
		EnvPolicy: &protocol.ExecEnvPolicy{Inherit: protocol.EnvInheritAll, Exclude: []string{}, Set: env, IncludeOnly: []string{}},
	}
	if r.tty {
		if size, ok := r.localSize(); ok {
			if r.caps.ProcessStartPtySize {
				p.PtySize = &size
			} else {
				r.out.once("size", "executor exec: terminal size not supported by this executor; the remote terminal is 24x80\n")
			}
		}
	}
	return p, nil
}

// loginShellArgv runs the executor's shell as a login shell. "-l" rather than a "-bash"
// arg0: codex 0.169.0 runs a PTY's arg0 as the program, so "-bash" would not start there.
func loginShellArgv(sh protocol.Shell) []string {
	if sh.Name == "cmd" {
		return []string{sh.Path}
	}
	return []string{sh.Path, "-l"}
}

// localSize is the local terminal's size: stdin's, else stdout's.
func (r *runner) localSize() (protocol.PtySize, bool) {
	for _, fd := range []int{r.cfg.StdinFD, r.cfg.StdoutFD} {
		if fd < 0 {
			continue
		}
		if s, err := termSize(fd); err == nil {
			return s, true
		}
	}
	return protocol.PtySize{}, false
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
