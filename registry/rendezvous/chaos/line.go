package chaos

import (
	"container/heap"
	"time"
)

// line is one direction's delay line as a pure structure: frames go in with a due time and
// come out in due-time order, ties (and equal delays) in arrival order. It does no I/O;
// link guards it with a mutex. Bounded by LineFrames (the caller blocks when full).
type line struct {
	items lineHeap
	seq   uint64
}

type lineItem struct {
	due time.Time
	seq uint64
	b   []byte
}

type lineHeap []lineItem

func (h lineHeap) Len() int { return len(h) }
func (h lineHeap) Less(i, j int) bool {
	if !h[i].due.Equal(h[j].due) {
		return h[i].due.Before(h[j].due)
	}
	return h[i].seq < h[j].seq
}
func (h lineHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *lineHeap) Push(x any)   { *h = append(*h, x.(lineItem)) }
func (h *lineHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = lineItem{}
	*h = old[:len(old)-1]
	return it
}

// push queues b, due at due.
func (l *line) push(b []byte, due time.Time) {
	l.seq++
	heap.Push(&l.items, lineItem{due: due, seq: l.seq, b: b})
}

// pop returns the earliest frame due at or before now.
func (l *line) pop(now time.Time) ([]byte, bool) {
	if len(l.items) == 0 || l.items[0].due.After(now) {
		return nil, false
	}
	return heap.Pop(&l.items).(lineItem).b, true
}

// next returns the due time of the earliest frame, false when empty.
func (l *line) next() (time.Time, bool) {
	if len(l.items) == 0 {
		return time.Time{}, false
	}
	return l.items[0].due, true
}

func (l *line) len() int { return len(l.items) }
