package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/execlab/executor/internal/reexec"
)

const usage = `usage: executor <command> [flags]

Commands:
  serve     run the JSON-RPC server on a local WebSocket (default ws://127.0.0.1:0) or stdio
  remote    register with an environment registry and serve harnesses through its rendezvous
  exec-server  the command line of 'codex exec-server' (drop-in): serve (--listen) or
            register (--remote URL --environment-id ID); 'exec-server forward --connect
            ws://…' registers an existing exec-server and bridges harnesses to it
  registry  run the self-hosted environment registry + rendezvous (registry serve, registry token)
  exec      run one command in an executor (through a registry, or --url ws://…) and stream it
  tunnel    forward local ports (-L, ssh's syntax) and a SOCKS5 proxy (-D) into an executor's host
  dev       all in one process: registry + rendezvous + remote executor; prints an exec command
  chaos     fault-injecting proxy in front of a registry + rendezvous (cut, stall, delay,
            drop, duplicate, reorder frames on either side, scheduled or on demand)
  sandbox-info  print the sandbox capability probe (backend, bwrap, seccomp, Landlock) as JSON
  bench     run the performance scoreboard against the reference (docs/bench.md)
  help      show this help

Run 'executor <command> -h' for the flags of a command.
`

// errUsage marks command-line mistakes: exit status 2.
var errUsage = errors.New("usage error")

func main() {
	// Hidden re-entry points first, before any other initialization (internal/reexec):
	// the sandbox launcher/inner stages (spec/sandbox.md §3.2), the sandboxed fs helper
	// (§4), the process guard and the bench helper, each registered by the package that
	// owns it. They skip run(): no closeInheritedOnExec (a stage's descriptors are the
	// sandboxed command's), no signal context, no debug knobs.
	reexec.Main()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	closeInheritedOnExec()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	stopKnobs, err := startDebugKnobs()
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	defer stopKnobs()
	switch args[0] {
	case "serve":
		err = runServe(ctx, args[1:], stdin, stdout, stderr)
	case "remote":
		err = runRemote(ctx, args[1:], stdin, stdout, stderr)
	case "exec-server":
		err = runExecServer(ctx, args[1:], stdin, stdout, stderr)
	case "bench":
		err = runBench(ctx, args[1:], stdout, stderr)
	case "registry":
		err = runRegistry(ctx, args[1:], stdin, stdout, stderr)
	case "exec":
		err = runExec(ctx, args[1:], stdin, stdout, stderr)
	case "tunnel":
		err = runTunnel(ctx, args[1:], stderr)
	case "dev":
		err = runDev(ctx, args[1:], stdin, stdout, stderr)
	case "chaos":
		err = runChaos(ctx, args[1:], stdout, stderr)
	case "sandbox-info":
		err = runSandboxInfo(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "executor: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	var exit *errExitCode
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &exit):
		return exit.code
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 2
	default:
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
}

// envOr returns the environment variable's value, or def when unset.
func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}
