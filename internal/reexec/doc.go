// Package reexec ends a test binary that was re-executed as a helper process (a
// sandbox stage, the fs helper, an in-sandbox probe program).
//
// # Layers
//
// Above: the TestMain functions of the sandbox, executor/process and executor/fs
// tests, which dispatch their re-entry points and then call Exit. Below:
// the exit_group(2) system call. It imports no project package.
//
// # Contract
//
// Exit terminates the process at once with exit_group(2), skipping the runtime's exit
// hooks. In a race-enabled build those hooks include ThreadSanitizer's finalizer, which
// sleeps atexit_sleep_ms (1 s by default) before exiting; helper processes inherit the
// sandboxed command's environment, not GORACE, and the sandbox, process and fs suites
// start them hundreds of times, so that sleep dominated their run time. A race found in
// a helper is still reported on its stderr when it happens; only the exit status 66
// that the finalizer would add is lost. Output written with os.Stdout and os.Stderr is
// unbuffered and already in the kernel when Exit runs; anything buffered in user space
// (a bufio.Writer) must be flushed first.
//
// # Limits and concurrency
//
// No limits. Exit may be called from any goroutine and never returns; other goroutines
// are not waited for, which is the point. Only tests use this package; production code
// exits through os.Exit.
package reexec
