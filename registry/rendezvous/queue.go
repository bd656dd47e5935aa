package rendezvous

import (
	"errors"
	"sync"
	"time"
)

// errQueueClosed: the socket the queue feeds has ended.
var errQueueClosed = errors.New("rendezvous: socket closed")

// errQueueTimeout: no room appeared within the caller's wait (slow consumer).
var errQueueTimeout = errors.New("rendezvous: outbound queue full past the slow-consumer timeout")

// outQueue is one socket's bounded outbound queue (QueueFrames frames, QueueBytes bytes).
// Overflow policy: push blocks until room (optionally bounded by a timeout, then fails);
// frames are never dropped. The socket's writer drains it.
type outQueue struct {
	// mu guards every field below: pushers (other sockets' read loops) and the writer race
	// on them.
	mu     sync.Mutex
	frames [][]byte // FIFO; nil when empty, so an idle socket holds no slice
	bytes  int
	closed bool
	// finishing: the socket closes once the queue has drained (socket.finish); later
	// pushes fail.
	finishing bool
	// writing is true while a writer goroutine owns draining; set by the push that finds it
	// false, cleared by the take that finds the queue empty (so no wake-up is ever lost).
	writing bool
	// room is closed and replaced whenever frames leave the queue, waking blocked pushers.
	room chan struct{}
}

// push appends b. wait < 0 blocks until there is room or the queue closes; wait >= 0 gives
// up with errQueueTimeout after that long. startWriter reports that no writer is running:
// the caller must start one.
func (q *outQueue) push(b []byte, wait time.Duration) (startWriter bool, err error) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		q.mu.Lock()
		if q.closed || q.finishing {
			q.mu.Unlock()
			return false, errQueueClosed
		}
		if len(q.frames) == 0 || (len(q.frames) < QueueFrames && q.bytes+len(b) <= QueueBytes) {
			q.frames = append(q.frames, b)
			q.bytes += len(b)
			startWriter = !q.writing
			q.writing = true
			q.mu.Unlock()
			return startWriter, nil
		}
		if q.room == nil {
			q.room = make(chan struct{})
		}
		room := q.room
		q.mu.Unlock()
		if wait < 0 {
			<-room
			continue
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		}
		select {
		case <-room:
		case <-timer.C:
			return false, errQueueTimeout
		}
	}
}

// take appends up to max frames to dst. When the queue is empty or closed it appends
// nothing and marks the writer stopped: the writer must exit, and close the socket when
// finished reports that finish was called.
func (q *outQueue) take(dst [][]byte, max int) (_ [][]byte, finished bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || len(q.frames) == 0 {
		q.writing = false
		return dst, q.finishing
	}
	n := min(max, len(q.frames))
	for _, b := range q.frames[:n] {
		dst = append(dst, b)
		q.bytes -= len(b)
	}
	clear(q.frames[:n])
	q.frames = q.frames[n:]
	if len(q.frames) == 0 {
		q.frames = nil
	}
	q.wakeLocked()
	return dst, false
}

// finish marks the queue finishing. It reports whether the caller must close the socket
// now (no writer runs, so none will see the queue drain).
func (q *outQueue) finish() (closeNow bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.finishing = true
	q.wakeLocked() // blocked pushers fail now
	return !q.writing
}

// close fails current and later pushes and drops what is queued (the socket is gone).
func (q *outQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.frames = nil
	q.bytes = 0
	q.wakeLocked()
	q.mu.Unlock()
}

func (q *outQueue) wakeLocked() {
	if q.room != nil {
		close(q.room)
		q.room = nil
	}
}
