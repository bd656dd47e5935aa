package process

import (
	"context"
	"errors"
	"os"
	"sync"
)

// stdinQueue carries process/write chunks to the child's stdin (a pipe, or the PTY
// master) through one writer goroutine, and remembers accepted writeIds.
//
// Overflow policy: at most stdinQueueBytes wait in the queue; a write that finds it full
// blocks until the writer takes the queue or the request's ctx ends (nothing is dropped;
// a single larger chunk is accepted into an empty queue). After stop (the child exited,
// or a write to it failed) a new write is accepted and discarded, as the reference's
// writer does (observed from codex 0.169.0 and 0.171.0: writes to an exited child or a
// closed pipe answer "accepted"; the child could not have read them either way).
type stdinQueue struct {
	f *os.File // closed by stop; Write on it unblocks with an error

	// mu makes "writeId not seen → enqueue → record writeId" one atomic step, so a
	// cancelled-then-retried request can never write twice (spec/jsonrpc.md §3.3).
	mu        sync.Mutex
	pending   [][]byte
	queued    int                 // bytes in pending
	seen      map[string]struct{} // accepted writeIds, at most writeIDMemory
	order     []string            // ring of the ids in seen, oldest at orderHead
	orderHead int
	stopped   bool
	// eof: process/closeStdin asked for EOF (pipes); later writes answer stdinClosed and
	// the writer closes f once pending is written (the child then reads EOF).
	eof bool
	// last is the last byte queued and wrote whether any was; a PTY closeStdin uses
	// them to flush a partial line before the EOF character (ptyEOFBytes).
	last     byte
	wrote    bool
	ready    chan struct{} // capacity 1: "pending became non-empty, eof or stopped"
	space    chan struct{} // closed when the writer takes the queue; nil until needed
	stopOnce sync.Once
}

func newStdinQueue(f *os.File) *stdinQueue {
	return &stdinQueue{f: f, seen: make(map[string]struct{}), ready: make(chan struct{}, 1)}
}

// errStdinEOF: the write came after process/closeStdin closed the pipe.
var errStdinEOF = errors.New("process: stdin was closed by process/closeStdin")

// write enqueues chunk under writeID; a writeID accepted before succeeds without
// enqueueing anything. Once stdin is gone the chunk is discarded and the write
// succeeds. It fails with errStdinEOF after closeEOF, and with ctx's error while
// waiting for queue space.
func (q *stdinQueue) write(ctx context.Context, writeID string, chunk []byte) error {
	for {
		q.mu.Lock()
		if _, dup := q.seen[writeID]; dup {
			q.mu.Unlock()
			return nil
		}
		if q.eof {
			q.mu.Unlock()
			return errStdinEOF
		}
		if q.stopped {
			q.rememberLocked(writeID)
			q.mu.Unlock()
			return nil
		}
		if q.queued == 0 || q.queued+len(chunk) <= stdinQueueBytes {
			if len(chunk) > 0 {
				q.pending = append(q.pending, chunk)
				q.queued += len(chunk)
				q.last, q.wrote = chunk[len(chunk)-1], true
			}
			q.rememberLocked(writeID)
			q.mu.Unlock()
			select {
			case q.ready <- struct{}{}:
			default:
			}
			return nil
		}
		if q.space == nil {
			q.space = make(chan struct{})
		}
		space := q.space
		q.mu.Unlock()
		select {
		case <-space:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (q *stdinQueue) rememberLocked(id string) {
	if len(q.order) < writeIDMemory {
		q.order = append(q.order, id)
	} else {
		delete(q.seen, q.order[q.orderHead])
		q.order[q.orderHead] = id
		q.orderHead = (q.orderHead + 1) % writeIDMemory
	}
	q.seen[id] = struct{}{}
}

// closeEOF marks stdin finished (process/closeStdin on a pipe): the writer writes what
// is queued, then closes the pipe. Idempotent; a no-op after stop.
func (q *stdinQueue) closeEOF() {
	q.mu.Lock()
	q.eof = true
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// enqueueControl queues b (a PTY's EOF character) after everything queued so far,
// ignoring the queue bound (it is a byte or two). build gets the last byte queued
// (and whether any was) under the queue lock. A no-op after stop.
func (q *stdinQueue) enqueueControl(build func(last byte, wrote bool) []byte) {
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		return
	}
	b := build(q.last, q.wrote)
	q.pending = append(q.pending, b)
	q.queued += len(b)
	q.last, q.wrote = b[len(b)-1], true
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// run is the writer goroutine; it returns after stop, a failed write, or (after
// closeEOF) once the queue is written and the file closed.
func (q *stdinQueue) run() {
	for {
		q.mu.Lock()
		for len(q.pending) == 0 && !q.stopped && !q.eof {
			q.mu.Unlock()
			<-q.ready
			q.mu.Lock()
		}
		if q.stopped {
			q.mu.Unlock()
			return
		}
		if len(q.pending) == 0 { // eof and everything written: the child sees EOF
			q.mu.Unlock()
			q.stop()
			return
		}
		batch := q.pending
		q.pending, q.queued = nil, 0
		q.wakeSpaceLocked()
		q.mu.Unlock()
		for _, b := range batch {
			if _, err := q.f.Write(b); err != nil {
				q.stop()
				return
			}
		}
	}
}

// wakeSpaceLocked wakes the writers waiting for queue space (the queue was just emptied).
func (q *stdinQueue) wakeSpaceLocked() {
	if q.space != nil {
		close(q.space)
		q.space = nil
	}
}

// stop marks stdin gone, wakes the writer and closes the file (which also unblocks a
// Write stuck on a child that does not read). Idempotent.
func (q *stdinQueue) stop() {
	q.stopOnce.Do(func() {
		q.mu.Lock()
		q.stopped = true
		q.pending, q.queued = nil, 0
		q.wakeSpaceLocked()
		q.mu.Unlock()
		select {
		case q.ready <- struct{}{}:
		default:
		}
		_ = q.f.Close()
	})
}
