package mux

import (
	"sync"

	"github.com/execlab/executor/internal/recbuf"
)

// recRefs counts the readers of the record payloads the Mux owns, so that each pooled
// buffer (capacity recbuf.Cap, sealed into by noise/channel) goes back to recbuf exactly
// once, after its last reader. Invariant: a record's count is
//
//	+1 for each queued outFrame carrying it (the first send and each ARQ resend), dropped by
//	   writeLoop once the frame is encoded (the frame buffer holds a copy) or by the sender
//	   whose enqueue failed;
//	+1 on an ARQ stream while arq.Endpoint retains it, dropped when OnAckRelease or Drain
//	   hands it back (a resend's +1 is taken under the Endpoint's lock, SetHold, so no ack
//	   can release a record between Due and its resend being queued).
//
// The buffer is recbuf.Put when the count reaches 0; payloads of another capacity are not
// counted (left to the garbage collector). Frames still queued when the Mux stops and
// records of a stream dropped unencodable are never Put: the garbage collector takes them
// with the Mux. Poisoning tests (recbuf.SetPoison) check the invariant end to end.
type recRefs struct {
	mu sync.Mutex
	n  map[*byte]int32
}

func recKey(p []byte) *byte {
	if cap(p) != recbuf.Cap {
		return nil
	}
	return &p[:1][0]
}

// add takes n references on p.
func (r *recRefs) add(p []byte, n int32) {
	k := recKey(p)
	if k == nil {
		return
	}
	r.mu.Lock()
	if r.n == nil {
		r.n = make(map[*byte]int32)
	}
	r.n[k] += n
	r.mu.Unlock()
}

// release drops n references on p and returns its buffer to the pool when none is left.
func (r *recRefs) release(p []byte, n int32) {
	k := recKey(p)
	if k == nil {
		return
	}
	r.mu.Lock()
	left := r.n[k] - n
	if left > 0 {
		r.n[k] = left
	} else {
		delete(r.n, k)
	}
	r.mu.Unlock()
	if left == 0 {
		recbuf.Put(p)
	}
}
