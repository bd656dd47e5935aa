// Package reexec is the one home of the binary's re-entry points: the hidden command
// lines under which the executor (or a test binary) starts itself again as a helper
// process — the sandbox launcher and inner stages, the sandboxed fs helper, the process
// guard, the bench helper — and the way such a process ends.
//
// # Layers
//
// Above: the packages that own a point register it in an init function (registering
// runs nothing: no init takes over a binary); cmd/executor's main calls Main, and the
// TestMain of every package whose test binary is re-entered (sandbox, executor/process,
// executor/fs, executor/capdiscover) calls TestMain, first, before any other
// initialization. Below: the standard library and the exit_group(2) system call. It
// imports no project package.
//
// # Contract
//
// A point is selected by an argv prefix after argv[0] (Point.Args; Exact: nothing
// after it) or by basename(argv[0]) (Point.Argv0, a multi-call alias, which wins).
// Dispatch runs the selected point's Run and reports its exit code; a point never runs
// the program's own initialization (flags, signal handlers, closeInheritedOnExec), so it
// must be dispatched before any. Code about to re-enter the running binary checks
// Dispatched first: a binary that never dispatches would run its whole program (or test
// suite) again in place of the point. An InProcess point may also be run by the sandbox
// inner stage itself, confined, when the sandboxed command is exactly [this executable,
// its flag] (InProcessFunc).
//
// Exit terminates the process at once with exit_group(2), skipping the runtime's exit
// hooks. In a race-enabled build those hooks include ThreadSanitizer's finalizer, which
// sleeps atexit_sleep_ms (1 s by default) before exiting; helper processes inherit the
// sandboxed command's environment, not GORACE, and the sandbox, process and fs suites
// start them hundreds of times, so that sleep dominated their run time. A race found in
// a helper is still reported on its stderr when it happens; only the exit status 66
// that the finalizer would add is lost. Output written with os.Stdout and os.Stderr is
// unbuffered and already in the kernel when Exit runs; anything buffered in user space
// (a bufio.Writer) must be flushed first. TestMain exits through Exit, Main through
// os.Exit.
//
// # Limits and concurrency
//
// No limits. Register, Dispatch, Dispatched and InProcessFunc are safe for concurrent
// use; Register panics on a point without Args or Run and on a second point with the
// same Args or Argv0. Exit may be called from any goroutine and never returns; other
// goroutines are not waited for, which is the point.
package reexec
