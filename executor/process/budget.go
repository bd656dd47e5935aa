package process

import (
	"slices"
	"sync"
)

// Budget bounds the unacknowledged output retained by every outputAck process of every
// Manager that shares it: one per executor (package executor gives the same Budget to
// every session's Manager), so the output an executor holds for clients that have not
// acknowledged it is bounded in total, not per process (issue 26: 8 detached processes at
// their 64 MiB bound each took `serve` to 599 MiB). Released-mode processes are not
// counted: their 1 MiB ring already bounds them. Each outputAck process holds its first
// budgetFreeBytes (1 MiB, a released ring's worth) outside the Budget, which keeps acks
// coming (limits.go); only what it holds above that is charged.
//
// Memory bound: unacknowledged output ≤ Total + 1 MiB per outputAck process + one read
// (readBufferSize, 256 KiB) per output stream admitted while under Total (a read's size
// is known only once it is done, so it is charged then).
//
// Overflow policy: block, never drop. A reader of a lossless process over its free
// allowance asks the Budget before each read of the child's output (Manager.waitRoom), as
// it checks the process's own MaxUnackedBytes; while the Budget's used bytes are at or
// above its total the reader waits, the pipe fills and the child blocks in write(2).
//
// Release: bytes return to the Budget when the client acknowledges them (Manager.Ack),
// and all of a process's charged bytes return when its Manager closes (session expiry,
// executor shutdown). An exited or terminated process keeps its share until then: its
// output is still owed to the client (lossless); its readers leave the queue as they
// end. So a client that never acknowledges holds at most the Budget (plus its processes'
// free allowances) until its session ends, and other outputAck processes wait meanwhile.
//
// Fairness: readers that find the Budget exhausted queue in arrival order. Whenever
// released bytes bring the used bytes under the total, every queued reader is granted one
// read at once, and a granted reader reads even if others filled the Budget again before
// it ran. So no reader starves while the Budget is being released: each release gives
// every waiting process one more read, whatever the others do, and a newcomer cannot
// overtake them (the queue is only non-empty while the Budget is exhausted, and then a
// newcomer queues behind).
//
// All methods are safe for concurrent use. mu is a leaf: it is taken under proc.mu and
// never the other way round.
type Budget struct {
	total int

	// mu guards used, queue and every ticket's fields; held for a few instructions only.
	mu    sync.Mutex
	used  int             // bytes charged and not yet released
	queue []*budgetTicket // readers waiting for the budget, in arrival order
	watch chan struct{}   // closed and cleared at every change; nil until a test watches
}

// budgetTicket is one reader's place in a Budget. The zero value is ready; it belongs to
// its reader goroutine, and the Budget's mu guards its fields.
type budgetTicket struct {
	queued  bool          // in the queue
	granted bool          // the next admit succeeds at once
	ch      chan struct{} // closed when granted; valid while queued
}

// NewBudget returns a Budget of total bytes; total ≤ 0 means DefaultMaxUnackedTotalBytes.
func NewBudget(total int) *Budget {
	if total <= 0 {
		total = DefaultMaxUnackedTotalBytes
	}
	return &Budget{total: total}
}

// Total returns the budget's bound in bytes.
func (b *Budget) Total() int { return b.total }

// Used returns the unacknowledged output bytes currently charged to the budget.
func (b *Budget) Used() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// admit reports whether t's reader may read now: it was granted, or the budget has room
// and nobody is queued. Otherwise t is queued (once) and admit returns the channel
// closed when t is granted.
func (b *Budget) admit(t *budgetTicket) (bool, <-chan struct{}) {
	if b == nil {
		return true, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if t.granted {
		t.granted = false
		return true, nil
	}
	if t.queued {
		return false, t.ch
	}
	// Invariant (grantLocked): the queue is empty whenever used < total.
	if b.used < b.total {
		return true, nil
	}
	t.queued = true
	t.ch = make(chan struct{})
	b.queue = append(b.queue, t)
	b.changedLocked()
	return false, t.ch
}

// cancel takes t out of the queue and drops an unused grant: its reader no longer waits
// for the budget (it waits for its own process, or it ends).
func (b *Budget) cancel(t *budgetTicket) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t.granted = false
	if !t.queued {
		return
	}
	t.queued = false
	if i := slices.Index(b.queue, t); i >= 0 {
		b.queue = slices.Delete(b.queue, i, i+1)
	}
	b.changedLocked()
}

// charge adds n bytes read and retained unacknowledged beyond a process's free allowance.
func (b *Budget) charge(n int) {
	if b == nil || n == 0 {
		return
	}
	b.mu.Lock()
	b.used += n
	b.changedLocked()
	b.mu.Unlock()
}

// release returns n bytes (acknowledged, or dropped with their Manager) and grants the
// queued readers if the budget has room again.
func (b *Budget) release(n int) {
	if b == nil || n == 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.grantLocked()
	b.changedLocked()
	b.mu.Unlock()
}

// grantLocked grants every queued reader one read when used is under total, which keeps
// the invariant admit relies on: the queue is empty whenever used < total.
func (b *Budget) grantLocked() {
	if b.used >= b.total || len(b.queue) == 0 {
		return
	}
	for i, t := range b.queue {
		t.queued = false
		t.granted = true
		close(t.ch)
		b.queue[i] = nil
	}
	b.queue = b.queue[:0]
}

// changedLocked wakes whoever watches the budget (tests, through export_test.go).
func (b *Budget) changedLocked() {
	if b.watch != nil {
		close(b.watch)
		b.watch = nil
	}
}
