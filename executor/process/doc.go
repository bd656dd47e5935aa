// Package process implements the process/* methods of the executor (spec/jsonrpc.md
// §3.1–§3.5, §5): it spawns children on pipes or a PTY, retains their output with a
// per-process seq counter, serves long-poll reads, writes, signals and terminates, and
// pushes process/output, process/exited and process/closed notifications.
//
// Layers: above it, package executor binds one Manager per session to the JSON-RPC
// dispatcher and Attaches the session's current connection; below it, the OS
// (fork/exec, pipes, creack/pty), and package sandbox for enforcement: sandbox.go resolves a
// request's sandbox intent through sandbox/policy and asks the Manager's sandbox.Launcher
// for the wrapped command line (sandbox.Command), then classifies a sandboxed child's
// output with sandbox.Denied; the mechanisms (bubblewrap, Landlock, seccomp) stay in
// package sandbox. It knows nothing of connections, sessions or JSON-RPC framing.
//
// Wire limits (limits.go): 1 MiB and 50,000 chunks retained per process, oldest evicted
// silently; closed entries evicted 30 s after close; the last 4096 writeIds remembered
// per process; PTY 24×80; exit codes 128+N for signal deaths with pipes, 1 with a PTY.
//
// Extensions (docs/protocol-extensions.md; not in the reference, advertised by package
// executor): CloseStdin (close_stdin.go: close the pipe after the queued writes, or queue
// the PTY's VEOF), ResizePty (resize_pty.go: TIOCSWINSZ on the master; the kernel sends
// SIGWINCH), SendSignal (send_signal.go: RFC 4254 signal names to the group), and an
// initial PTY size from process/start's ptySize.
//
// Lossless output (ack_state.go, ack.go; docs/reliability.md): a process started with
// outputAck keeps every event its client has not acknowledged with process/ack (up to
// Options.MaxUnackedBytes, 64 MiB, then the reader stops and the child blocks; and, for all
// such processes of all Managers sharing it, under one Budget, Options.UnackedBudget,
// 64 MiB beyond 1 MiB per process, budget.go), pushes them
// from one sender goroutine in seq order inside a window (the attachment's: Options.
// OutputWindow, 2 MiB, or FlowControlledOutputWindow, 6 MiB, after AttachFlowControlled;
// 1,024 events), and after every Attach resends from the last ack. Acknowledged output
// ages out under the released bounds; a closed entry is evicted ClosedRetention after its
// close is acknowledged.
//
// Invariants:
//   - One seq counter per process, from 1, shared by output chunks, the exit event and
//     the close event; close needs the exit and EOF on every output stream.
//   - Notifications for one process are pushed in seq order; while the attached
//     notifier blocks, that process's pumps block (back-pressure, no drops); while
//     detached, events are only retained. For an outputAck process the pumps never wait
//     for the notifier, only for room under MaxUnackedBytes, and its sender is its only
//     notifier.
//   - Every child is reaped by its wait goroutine; a signal is never sent to a group
//     whose leader has been reaped, so recycled pids are safe.
//   - Every goroutine (per process: one wait, one or two readers, at most one stdin
//     writer, one sender with outputAck) is counted in Manager.wg; all end once the
//     process is closed (the sender once the close is acknowledged), and Close kills
//     every group, stops the pumps and senders and waits for them.
//   - Process lifetime is the Manager's, never a request ctx's.
//
// Concurrency: all Manager methods are safe for concurrent use. Lock order:
// Manager.attachMu → proc.emitMu → Manager.mu → proc.mu → Budget.mu; stdinQueue.mu and
// Budget.mu are leaves.
//
// Linux only for now: spawn_other.go fails every start.
package process
