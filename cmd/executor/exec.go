package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/execlab/executor/cmd/executor/internal/execcli"
	"github.com/execlab/executor/harness"
	"github.com/execlab/executor/jsonwire"
)

// envList collects repeated --env K=V flags.
type envList map[string]string

func (e envList) String() string { return "" }
func (e envList) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want K=V, got %q", v)
	}
	e[k] = val
	return nil
}

const (
	// defaultReconnectTimeout is exec's session recovery window: a train tunnel, a hotel
	// Wi-Fi re-login or a restarting load balancer all fit in it.
	defaultReconnectTimeout = 10 * time.Minute
	// execTransportFailure is exec's status when the connection itself failed (ssh's 255).
	execTransportFailure = 255
)

// errExitCode carries a remote exit status through run.
type errExitCode struct{ code int }

func (e *errExitCode) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func runExec(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("executor exec", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: executor exec [--registry URL --environment-id ID --token-file F | --url ws://… [--auth-bearer-token-file F]] [flags] [-- argv…]

Runs one command in an executor and streams its output; exits with its exit code (128+N
when it dies by signal N), 126/127 when it cannot be executed / is not found, and 255 when
the connection, authentication or registry fails (as ssh does). Without argv, runs the remote user's login shell, in a PTY
when local stdin and stdout are terminals (as ssh does). Remote executors are reached
through a registry (reconnecting transparently); local ones ('executor serve') by --url.

Flags:
`)
		fs.PrintDefaults()
	}
	target := addTargetFlags(fs, "environment to run in [EXECUTOR_ENVIRONMENT_ID]",
		"with --url: file holding the listener's token (capability token or signed JWT, trimmed), sent as 'authorization: Bearer' like the codex CLI's auth_bearer_token [EXECUTOR_AUTH_BEARER_TOKEN_FILE]")
	tty := fs.Bool("t", false, "run in a PTY sized like the local terminal, which is put in raw mode (default without argv when stdin and stdout are terminals)")
	noTTY := fs.Bool("T", false, "never allocate a PTY")
	interactive := fs.Bool("i", false, "forward stdin, and its EOF when the executor supports it (implied without argv)")
	cwd := fs.String("cwd", "", "working directory on the executor host (default: the executor's)")
	env := envList{}
	fs.Var(env, "env", "K=V environment variable for the command (repeatable)")
	reconnect := fs.Duration("reconnect-timeout", defaultReconnectTimeout,
		"through a registry: how long to keep trying to resume the session after the connection breaks without progress (an attempt that still delivered output restarts it; the last attempt is made at the deadline; the executor's --session-ttl bounds it too)")
	logLevel := fs.String("log-level", envOr("EXECUTOR_LOG_LEVEL", "warn"), "log level on stderr [EXECUTOR_LOG_LEVEL]")
	logFormat := logFormatFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tty && *noTTY {
		return fmt.Errorf("%w: -t and -T are exclusive", errUsage)
	}
	cfg := execcli.Config{
		Argv: fs.Args(), Interactive: *interactive, Cwd: *cwd, Env: env,
		Stdin: stdin, Stdout: stdout, Stderr: stderr, StdinFD: -1, StdoutFD: -1,
	}
	stdinFD, stdoutFD := terminalFD(stdin), terminalFD(stdout)
	// ssh's rule: -t forces a PTY, -T forbids one, and without either a PTY is allocated
	// for a login shell (no argv) when both stdin and stdout are terminals.
	cfg.TTY = *tty || (!*noTTY && fs.NArg() == 0 && stdinFD >= 0 && stdoutFD >= 0)
	if cfg.TTY {
		cfg.StdinFD, cfg.StdoutFD = stdinFD, stdoutFD
	}
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	if explicit["auth-bearer-token-file"] && *target.url == "" {
		return fmt.Errorf("%w: --auth-bearer-token-file is for --url (a registry takes --token-file)", errUsage)
	}
	t, err := target.resolve()
	if err != nil {
		return err
	}
	cfg.URL, cfg.AuthBearerToken, cfg.Registry, cfg.EnvironmentID, cfg.Token = t.url, t.authBearerToken, t.registry, t.environmentID, t.token
	if t.registry != "" {
		cfg.ReconnectTimeout = *reconnect
	}
	log, err := newLogger(stderr, *logLevel, *logFormat)
	if err != nil {
		return err
	}
	cfg.Logger = log
	tr, stopTracing, err := startTracing(ctx, "executor-exec", log)
	if err != nil {
		return err
	}
	defer stopTracing()
	if tr != nil {
		cfg.Trace = tr.HarnessConnect
	}
	// SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded to the remote process by
	// execcli, not reasons to stop: run without main's signal cancellation.
	err = execcli.Run(context.WithoutCancel(ctx), cfg)
	var ee *execcli.ExitError
	if errors.As(err, &ee) {
		return &errExitCode{code: ee.Code}
	}
	if err != nil {
		return reportExecFailure(stderr, cfg.EnvironmentID, err)
	}
	return nil
}

// reportExecFailure says on stderr why a run ended without the remote exit status and
// returns exec's status for it (ssh's: 255 for the connection, 126/127 for a start failure,
// 1 for a refused request).
func reportExecFailure(stderr io.Writer, env string, err error) error {
	if code := startFailureExit(err); code != 0 {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return &errExitCode{code: code}
	}
	switch {
	case errors.Is(err, harness.ErrExecutorExited):
		// Our registry's exit notice (docs/reliability.md §5): not a partition, so no
		// point in retrying for the rest of the window.
		fmt.Fprintf(stderr, "Error: executor for environment %s exited (its processes are gone)\n", env)
		return &errExitCode{code: execTransportFailure}
	case connectionDropped(err):
		// The executor (or the path to it) went away mid-run: say so first; the cause
		// follows for the curious.
		fmt.Fprintf(stderr, "Error: connection to the executor lost (%v)\n", err)
	default:
		fmt.Fprintf(stderr, "Error: %v\n", err)
	}
	return &errExitCode{code: execFailureExit(err)}
}

// connectionDropped reports whether err is an established connection ending under the
// client (EOF, a reset): the executor died or the network failed, not a refusal.
func connectionDropped(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed)
}

// execFailureExit is the status of a run that ended without the remote exit status, as
// ssh has it: 255 for a failure of the connection itself (transport, authentication,
// registry, a recovery that ran out of time, a lost session or process); 1 when the
// executor answered a request with an error (the command could not be started there).
func execFailureExit(err error) int {
	var re *harness.RPCError
	if errors.As(err, &re) && re.Code != harness.CodeConnectionLost {
		return 1
	}
	return execTransportFailure
}

// terminalFD returns f's descriptor when it is an *os.File on a terminal, else -1.
func terminalFD(f any) int {
	if file, ok := f.(*os.File); ok && execcli.IsTerminal(int(file.Fd())) {
		return int(file.Fd())
	}
	return -1
}

// startFailureExit maps a process/start failure to the shell's exit statuses, as ssh and
// `kubectl exec` users expect: 127 when the program (or cwd) is not found, 126 when it
// cannot be executed. It needs error.data.kind (codex 0.171.0 executors and ours); with
// a 0.169.0 executor the failure exits 1. 0 means "not such a failure".
func startFailureExit(err error) int {
	var re *harness.RPCError
	if !errors.As(err, &re) {
		return 0
	}
	switch re.Kind() {
	case jsonwire.KindSpawnNotFound:
		return 127
	case jsonwire.KindSpawnPermissionDenied:
		return 126
	}
	return 0
}
