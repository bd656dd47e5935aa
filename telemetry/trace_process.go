package telemetry

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/execlab/executor/executor/process"
)

// processEndQueue bounds the process spans waiting to be ended by routineEndSpans
// (implementation choice: a burst of reaps beyond it ends its spans inline instead, so
// nothing blocks and nothing is lost).
const processEndQueue = 1024

// Why a goroutine ends the process spans: a process is reaped on its own short-lived
// goroutine (executor/process routineWait), whose small stack the SDK's span end
// (attribute normalisation, End) outgrows; the stack copy cost more than the rest of the
// process's tracing together (oneshot_local CPU profiles, docs/bench.md). One long-lived
// goroutine, whose stack grows once, ends them all with the reap time as end time.

// spanEnd is one process span to end.
type spanEnd struct {
	span  trace.Span
	class process.ExitClass
	at    time.Time
}

// processEnder owns routineEndSpans. Its zero value is not usable; start it with start.
type processEnder struct {
	ch   chan spanEnd
	done chan struct{}
	// mu guards closed against a send racing stop: send holds it shared, stop exclusively.
	mu     sync.RWMutex
	closed bool
}

func (p *processEnder) start() {
	p.ch = make(chan spanEnd, processEndQueue)
	p.done = make(chan struct{})
	go p.routineEndSpans()
}

// routineEndSpans ends queued process spans until stop closes the queue.
func (p *processEnder) routineEndSpans() {
	defer close(p.done)
	for e := range p.ch {
		endProcessSpan(e)
	}
}

// send queues e, or ends it inline when the queue is full or stopped.
func (p *processEnder) send(e spanEnd) {
	p.mu.RLock()
	if !p.closed {
		select {
		case p.ch <- e:
			p.mu.RUnlock()
			return
		default:
		}
	}
	p.mu.RUnlock()
	endProcessSpan(e)
}

// stop ends the spans still queued and waits for routineEndSpans. Idempotent.
func (p *processEnder) stop() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.ch)
	}
	p.mu.Unlock()
	<-p.done
}

func endProcessSpan(e spanEnd) {
	e.span.SetAttributes(attribute.String("process.exit_class", string(e.class)))
	if e.class != process.ExitOK {
		e.span.SetStatus(codes.Error, string(e.class))
	}
	e.span.End(trace.WithTimestamp(e.at))
}

// StartProcess implements process.Span: one span per child, from spawn to reap, a child
// of the process/start request's span. The returned func records the reap time and hands
// the span to routineEndSpans.
func (t *Tracing) StartProcess(ctx context.Context) func(process.ExitClass) {
	_, span := t.startWith(ctx, "process", t.processOpts)
	return func(class process.ExitClass) {
		t.ender.send(spanEnd{span: span, class: class, at: time.Now()})
	}
}
