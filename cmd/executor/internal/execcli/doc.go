// Package execcli is `executor exec`: run one command in an executor — remote through a
// registry (harness.Dial, with transparent session recovery) or local (harness.DialLocal) —
// streaming its output, forwarding stdin, interrupts and exiting with its exit code.
//
// Flow: dial → initialize → process/start (pipes, or a PTY with -t) → deliver process/output
// to stdout/stderr in seq order until process/closed → exit code from process/exited.
// stdin is forwarded with process/write (one writeId per chunk, so a retried write after a
// reconnect is applied once). SIGINT sends process/signal{interrupt}; with -t the local
// terminal is in raw mode and Ctrl-C travels as a byte to the remote PTY instead.
//
// The protocol has no stdin-EOF operation: with -i the child's stdin stays open after local
// EOF. Without -i or -t the child's stdin is /dev/null.
//
// Concurrency: Run owns three goroutines (stdin pump, signal forwarder, and the harness
// Client's read loop) and waits for all before returning.
package execcli
