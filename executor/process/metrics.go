package process

import (
	"context"
	"time"
)

// Observer receives counts of process events, for metrics (cmd/executor wires Prometheus
// to it; this package never imports a metrics library). Calls carry no process ids, argv
// or output, only bounded values. Implementations must be safe for concurrent use and
// cheap: OutputBytes runs on every output chunk.
type Observer interface {
	// ProcessStarted is called once per child spawned.
	ProcessStarted()
	// ProcessExited is called once per child reaped, with how it ended.
	ProcessExited(class ExitClass)
	// OutputBytes is called for each output chunk read from a child, with its size.
	OutputBytes(n int)
	// Backpressure is called after an outputAck process's pump waited, with the queue
	// (QueueOutputWindow or QueueOutputBound) and how long the wait lasted. It has the
	// signature of jsonrpc.Observer's, so one implementation serves both.
	Backpressure(queue string, d time.Duration)
}

// Queue names passed to Observer.Backpressure (docs/observability.md).
const (
	// QueueOutputWindow: the sender of an outputAck process waited, with events ready,
	// for the client to acknowledge (its OutputWindow was full).
	QueueOutputWindow = "output_window"
	// QueueOutputBound: the reader of an outputAck process waited at MaxUnackedBytes
	// (or the chunk bound, or the executor's exhausted Budget) for acknowledgements; the
	// child was blocked meanwhile.
	QueueOutputBound = "output_bound"
)

// ExitClass is the bounded classification of a process's end.
type ExitClass string

const (
	ExitOK            ExitClass = "ok"             // exit status 0
	ExitError         ExitClass = "error"          // a non-zero exit status
	ExitSignal        ExitClass = "signal"         // killed by a signal (terminate included)
	ExitSandboxDenied ExitClass = "sandbox_denied" // failed, and classified as a sandbox denial
)

// exitClass classifies an exit: code is the wire exit code, sig the killing signal (0 if
// none), denied the sandbox-denial classification.
func exitClass(code, sig int32, denied bool) ExitClass {
	switch {
	case denied:
		return ExitSandboxDenied
	case sig != 0:
		return ExitSignal
	case code == 0:
		return ExitOK
	}
	return ExitError
}

// nopObserver is the Observer of a nil Options.Observer.
type nopObserver struct{}

func (nopObserver) ProcessStarted()         {}
func (nopObserver) ProcessExited(ExitClass) {}
func (nopObserver) OutputBytes(int)         {}

func (nopObserver) Backpressure(string, time.Duration) {}

// Span is the optional tracing half of an Observer: when the Observer implements it,
// StartProcess is called once per child spawned, with the process/start request's ctx
// (which carries its trace span, if any), and the func it returns once when the child is
// reaped, with how it ended. Implementations must be safe for concurrent use.
type Span interface {
	StartProcess(ctx context.Context) func(ExitClass)
}
