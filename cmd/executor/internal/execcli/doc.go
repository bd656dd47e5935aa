// Package execcli is `executor exec`: run one command in an executor — remote through a
// registry (harness.Dial, with transparent session recovery) or local (harness.DialLocal) —
// streaming its output, forwarding stdin, its EOF, signals and terminal size, and exiting
// with its exit code, as ssh does.
//
// Flow: dial → initialize (capabilities decide which protocol extensions are used,
// docs/protocol-extensions.md) → process/start (pipes, or a PTY with -t, sized like the
// local terminal via ptySize) → deliver process/output to stdout/stderr in seq order until
// process/closed → exit code from process/exited (128+N for a pipe child killed by signal
// N, as the executor reports it; 1 for a PTY child, the reference's rule).
//
// stdin is forwarded with process/write (one writeId per chunk, so a retried write after a
// reconnect is applied once). At local EOF: process/closeStdin when advertised; otherwise
// with a PTY the EOF character (^D) is written, and with pipes the remote stdin stays open
// and stderr says once how to end the command. Without -i or -t the child's stdin is
// /dev/null. No argv runs the executor's shell (environment/info) with -l.
//
// Signals (signals.go): SIGINT, SIGTERM, SIGHUP, SIGQUIT are forwarded (process/sendSignal
// when advertised; otherwise SIGINT as process/signal "interrupt" and the others as
// process/terminate); SIGWINCH with -t resizes the remote PTY (process/resizePty). Every
// missing extension is reported once on stderr.
//
// Terminal: with -t and a terminal on stdin it is in raw mode while the command runs and
// restored on every way out of Run: return, lost connection, a panic in Run or in one of
// its goroutines (each defers terminal.restoreOnPanic).
//
// Concurrency: Run owns the stdin pump (and, on Linux, a goroutine that cancels its
// pending read through a wake-up pipe, so stdin's shared file flags are never changed),
// the signal forwarder, and the harness Client's read loop, and waits for all before
// returning.
package execcli
