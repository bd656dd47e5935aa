package harness

import (
	"context"
	"sync"
)

// noteQueue is the queue between the Client's read loop and the consumer of
// Notifications. Overflow policy: block. It is bounded by count (Options.NotificationBuffer)
// and by the bytes of the queued params (Options.NotificationBytes); put waits while either
// bound is reached, which stops the read loop and, through the transport, the executor
// (package doc, back-pressure). One notification always fits an empty queue.
//
// Its one consumer is routineForward, which hands items to the Notifications channel one
// at a time, so the Client knows when the consumer took each one (acknowledged output).
type noteQueue struct {
	maxItems, maxBytes int

	// mu guards items, bytes and ended.
	mu    sync.Mutex
	items []Notification
	bytes int
	ended bool // the read loop stopped: drain, then close Notifications

	space chan struct{} // capacity 1: room was freed
	avail chan struct{} // capacity 1: an item arrived, or ended
}

func newNoteQueue(maxItems, maxBytes int) *noteQueue {
	return &noteQueue{maxItems: maxItems, maxBytes: maxBytes,
		space: make(chan struct{}, 1), avail: make(chan struct{}, 1)}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// put appends n, waiting while the queue is full. It reports false when ctx ends first.
func (q *noteQueue) put(ctx context.Context, n Notification) bool {
	size := len(n.Params)
	for {
		q.mu.Lock()
		if len(q.items) == 0 || (len(q.items) < q.maxItems && q.bytes+size <= q.maxBytes) {
			q.items = append(q.items, n)
			q.bytes += size
			q.mu.Unlock()
			signal(q.avail)
			return true
		}
		q.mu.Unlock()
		select {
		case <-q.space:
		case <-ctx.Done():
			return false
		}
	}
}

// end marks the read loop stopped.
func (q *noteQueue) end() {
	q.mu.Lock()
	q.ended = true
	q.mu.Unlock()
	signal(q.avail)
}

// get removes the oldest item, waiting for one. It reports ok false once the queue has
// ended and is empty, or when stop is closed.
func (q *noteQueue) get(stop <-chan struct{}) (n Notification, ok bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			n = q.items[0]
			q.items[0] = Notification{}
			q.items = q.items[1:]
			q.bytes -= len(n.Params)
			q.mu.Unlock()
			signal(q.space)
			return n, true
		}
		ended := q.ended
		q.mu.Unlock()
		if ended {
			return Notification{}, false
		}
		select {
		case <-q.avail:
		case <-stop:
			return Notification{}, false
		}
	}
}
