package process

import "time"

// Wire limits, fixed by the reference (spec/jsonrpc.md §3.3, §5.1, §5.4).
const (
	// DefaultMaxRetainedBytes is the output retained per process, in decoded bytes;
	// the oldest chunks are evicted silently beyond it (§5.4).
	DefaultMaxRetainedBytes = 1 << 20
	// DefaultMaxRetainedChunks bounds the retained chunks per process (§5.4); a full
	// process/read of this many chunks fits the 262,144-value budget (§1.3).
	DefaultMaxRetainedChunks = 50_000
	// DefaultClosedRetention is how long a closed process stays readable before its
	// entry is evicted and its id becomes reusable (§5.4).
	DefaultClosedRetention = 30 * time.Second
	// writeIDMemory is how many accepted writeIds are remembered per process, FIFO (§3.3).
	writeIDMemory = 4096
	// ptyRows and ptyCols are the terminal size of a PTY started without ptySize; the
	// reference has no resize RPC (§5.1). Our extensions (docs/protocol-extensions.md)
	// set another size at start (ptySize) or later (process/resizePty).
	ptyRows = 24
	ptyCols = 80
	// signalExitBase is added to the signal number of a pipe-mode child killed by a
	// signal (SIGKILL → 137, §5.4).
	signalExitBase = 128
	// ptySignalExitCode is the exit code of a PTY-mode child killed by a signal (§5.4).
	ptySignalExitCode = 1
	// deniedGrace is how long a sandboxed process's exit waits for trailing output
	// before the sandboxDenied heuristic runs (spec/sandbox.md §5, spec/jsonrpc.md §5.3:
	// 20 ms). Only non-zero exits of sandboxed processes wait.
	deniedGrace = 20 * time.Millisecond
)

// Extension constants (docs/protocol-extensions.md).
const (
	// minPtyCells is the smallest rows/cols a ptySize or process/resizePty accepts (a
	// 0×N terminal makes full-screen programs divide by zero); the upper bound is the
	// uint16 of struct winsize (65535), enforced by the decoder.
	minPtyCells = 1
	// defaultVEOF is the EOF character process/closeStdin sends to a PTY whose termios
	// cannot be read: ^D, the POSIX default VEOF (termios(3)).
	defaultVEOF = 0x04
)

// Lossless output (docs/reliability.md §4), our choice.
const (
	// DefaultMaxUnackedBytes is the output, in bytes, retained per outputAck process
	// until acknowledged; at the bound the reader stops reading (the child blocks).
	DefaultMaxUnackedBytes = 64 << 20
	// DefaultMaxUnackedTotalBytes is the Budget of unacknowledged output, in bytes, shared
	// by every outputAck process of an executor (every session), beyond each process's
	// budgetFreeBytes: 64 MiB, one process's DefaultMaxUnackedBytes, so one busy process may
	// still run ahead by its whole bound and several share it. Overflow policy: block
	// (back-pressure), never drop; a reader over it waits before its next read, exactly as
	// one at its own bound, until acknowledgements or a closed session release bytes.
	// Bound: Total + budgetFreeBytes per outputAck process + one readBufferSize per output
	// stream (budget.go: fairness, release).
	DefaultMaxUnackedTotalBytes = DefaultMaxUnackedBytes
	// DefaultOutputWindow is the output, in decoded bytes, pushed and not yet
	// acknowledged per outputAck process: 2 MiB, about 2.7 MiB as base64 JSON, under
	// the rendezvous's 4 MiB per-socket queue (registry/rendezvous QueueBytes) that
	// closes a harness socket left full for 5 s; with relay ARQ that queue holds at most
	// the stream's 2 MiB ARQ window anyway. 1 MiB cost ~10 % of relay_stream_lossless
	// (docs/reliability.md §4, docs/bench.md).
	DefaultOutputWindow = 2 << 20
	// DefaultFlowControlledOutputWindow is DefaultOutputWindow on a transport with flow
	// control of its own (Manager.AttachFlowControlled: relay ARQ v1, whose 2 MiB send
	// window bounds what the rendezvous queues whatever the executor pushes). 6 MiB is
	// 8 MiB as base64, our harness's notification queue (harness DefaultNotificationBytes):
	// a window the consumer has not taken yet still fits in that queue, so a slow
	// consumer costs the client that queue and no more. The 2 MiB window ran relay_stream_lossless at
	// 0.70–0.82 with the sender waiting for acks about 60 % of the time (round trip under
	// load 25–50 ms); 16 MiB never waited but took the exec client of the 1 GB
	// slow-reader soak to 64 MiB RSS (6 MiB: 47 MiB). docs/reliability.md §4.
	DefaultFlowControlledOutputWindow = 6 << 20
	// budgetFreeBytes is the unacknowledged output, in bytes, each outputAck process holds
	// outside the executor's Budget: a reader under it reads without asking the Budget, and
	// only bytes above it are charged. It is the liveness condition of the shared budget:
	// our harness acknowledges a process's output only once its consumption since the last
	// ack crosses a threshold (at most 1 MiB of notifications, harness
	// ackEveryBytesFlowControlled, i.e. under 0.8 MiB of output; or 256 events), so a
	// process blocked by the Budget must have at least that much unacknowledged output or
	// no ack might ever come (every process of an exhausted budget just below its
	// threshold; TestBudget_LivenessWithThresholdAcks). With 1 MiB free, a blocked process
	// has ≥ 1 MiB unacknowledged; its sender pushes it (the windows are larger) and
	// consuming it crosses the threshold. 1 MiB is also what a released-mode process's ring
	// holds (DefaultMaxRetainedBytes), so an outputAck process costs at most that plus its
	// share of the Budget.
	budgetFreeBytes = DefaultMaxRetainedBytes
	// outputWindowEvents bounds the events pushed and not yet acknowledged per outputAck
	// process, so tiny chunks cannot flood a slow client either.
	outputWindowEvents = 1024
)

// Implementation limits, our choice.
const (
	// readBufferSize is the largest single read from a child's output, in bytes; one
	// read becomes one chunk (the reference reads ~8 KiB; larger reads keep
	// notification overhead low at high throughput, §5.1).
	readBufferSize = 256 << 10
	// outputPipeBytes is the kernel buffer requested for stdout/stderr pipes (the
	// default is 64 KiB), so that reads of up to readBufferSize can fill.
	outputPipeBytes = 1 << 20
	// initialReadSize is the first read size of each stream; it doubles after every
	// read that fills the buffer, up to readBufferSize, so short-lived or quiet
	// processes do not pay for 64 KiB buffers.
	initialReadSize = 8 << 10
	// compactBelow: a read shorter than readBufferSize/compactBelow is copied into an
	// exact-size slice before being retained, so retention memory stays within about
	// twice MaxRetainedBytes even for many tiny chunks.
	compactBelow = 2
	// flowingReadBytes: a read of at least this many bytes that did not fill the buffer
	// means the child writes in bulk and the pump has caught up with it (4 KiB is the
	// pipe page and stdio's buffer when writing to a pipe; an interactive line is
	// shorter), so the pump pauses flowPause before the next read (issue 16).
	flowingReadBytes = 4 << 10
	// flowPause is that pause: while it lasts the pipe fills (up to outputPipeBytes), so
	// the next read, and the notification it becomes, is large instead of one per
	// child write. It delays only output that follows a bulk read, by at most this
	// much; a read that fills the buffer reads again at once.
	flowPause = time.Millisecond
	// stdinQueueBytes bounds the bytes accepted by process/write but not yet written to
	// the child; a write that finds the queue full blocks (honouring its ctx) until the
	// child reads. A single larger chunk is accepted when the queue is empty.
	stdinQueueBytes = 8 << 20
	// terminateDrain is how long the output pumps keep draining after the exit of a
	// process killed by process/terminate or Close before they stop, even if an
	// escaped descendant still holds the pipes (§5.4: trailing output may be cut short).
	terminateDrain = 100 * time.Millisecond
	// exitDrainTimeout bounds how long the exit event waits for the pumps to take what
	// the pipes held at exit, so that output written before the exit is numbered before
	// it (spec/jsonrpc.md §5.3 example). It only runs out when a pump is stalled by a
	// slow notifier.
	exitDrainTimeout = 250 * time.Millisecond
)
