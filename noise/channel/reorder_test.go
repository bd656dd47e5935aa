package channel

import (
	"errors"
	"fmt"
	"testing"
)

func rec(seq uint32, n int) []byte {
	b := make([]byte, n)
	if n > 0 {
		b[0] = byte(seq)
	}
	return b
}

func seqsOf(ready [][]byte) []byte {
	var out []byte
	for _, r := range ready {
		out = append(out, r[0])
	}
	return out
}

func TestReorder_Cases(t *testing.T) {
	type step struct {
		seq     uint32
		n       int
		release string // seqs released by this push
		err     error
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"in order", []step{{0, 1, "[0]", nil}, {1, 1, "[1]", nil}, {2, 1, "[2]", nil}}},
		{"gap then fill releases run", []step{{2, 1, "[]", nil}, {1, 1, "[]", nil}, {0, 1, "[0 1 2]", nil}, {3, 1, "[3]", nil}}},
		{"stale dropped", []step{{0, 1, "[0]", nil}, {1, 1, "[1]", nil}, {0, 1, "[]", nil}, {2, 1, "[2]", nil}}},
		{"buffered duplicate dropped", []step{{1, 1, "[]", nil}, {1, 1, "[]", nil}, {0, 1, "[0 1]", nil}, {1, 1, "[]", nil}}},
		{"distance 64 buffered", []step{{64, 1, "[]", nil}}},
		{"distance 65 rejected", []step{{65, 1, "[]", ErrReorderWindow}}},
		{"window moves", []step{{0, 1, "[0]", nil}, {65, 1, "[]", nil}, {66, 1, "[]", ErrReorderWindow}}},
		{"far future rejected", []step{{^uint32(0), 1, "[]", ErrReorderWindow}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r reorderBuffer
			for i, s := range tc.steps {
				ready, err := r.push(nil, s.seq, rec(s.seq, s.n))
				if !errors.Is(err, s.err) {
					t.Fatalf("step %d (seq %d): got err %v, want %v", i, s.seq, err, s.err)
				}
				if got := fmt.Sprint(seqsOf(ready)); got != s.release {
					t.Fatalf("step %d (seq %d): released %s, want %s", i, s.seq, got, s.release)
				}
			}
		})
	}
}

func TestReorder_FirstCopyWins(t *testing.T) {
	var r reorderBuffer
	first, second := []byte{1, 'a'}, []byte{1, 'b'}
	r.push(nil, 1, first)
	r.push(nil, 1, second)
	ready, _ := r.push(nil, 0, []byte{0})
	if len(ready) != 2 || ready[1][1] != 'a' {
		t.Fatalf("released %q, want the first copy of seq 1", ready)
	}
}

func TestReorder_PendingBytes(t *testing.T) {
	var r reorderBuffer
	for i := uint32(1); i <= 17; i++ {
		if _, err := r.push(nil, i, rec(i, MaxRecordLen)); err != nil {
			t.Fatalf("record %d of 61456 B: %v", i, err)
		}
	}
	if got, want := r.pendingBytes, 17*MaxRecordLen; got != want {
		t.Fatalf("pendingBytes = %d, want %d", got, want)
	}
	if _, err := r.push(nil, 18, rec(18, MaxRecordLen)); !errors.Is(err, ErrPendingFull) {
		t.Fatalf("18th record: got %v, want ErrPendingFull", err)
	}
	// Exactly 1 MiB is allowed.
	var r2 reorderBuffer
	if _, err := r2.push(nil, 1, rec(1, MaxPendingBytes)); err != nil {
		t.Fatalf("exactly 1 MiB: %v", err)
	}
	if _, err := r2.push(nil, 2, rec(2, 1)); !errors.Is(err, ErrPendingFull) {
		t.Fatalf("1 MiB + 1: got %v, want ErrPendingFull", err)
	}
	// Releasing frees the budget.
	ready, err := r2.push(nil, 0, rec(0, 1))
	if err != nil || len(ready) != 2 || r2.pendingBytes != 0 || r2.pendingCount != 0 {
		t.Fatalf("after release: %d ready, err %v, pending %d/%d; want 2, nil, 0/0", len(ready), err, r2.pendingBytes, r2.pendingCount)
	}
}

func TestReorder_NearMaxSeq(t *testing.T) {
	r := reorderBuffer{next: uint64(^uint32(0)) - 1}
	ready, err := r.push(nil, ^uint32(0), rec(0xff, 1))
	if err != nil || len(ready) != 0 {
		t.Fatal(err)
	}
	ready, err = r.push(nil, ^uint32(0)-1, rec(0xfe, 1))
	if err != nil || len(ready) != 2 {
		t.Fatalf("got %d released, %v; want 2", len(ready), err)
	}
	if r.next != 1<<32 {
		t.Fatalf("next = %d, want 2^32 (no wrap)", r.next)
	}
	if ready, _ := r.push(nil, 0, rec(0, 1)); len(ready) != 0 {
		t.Fatal("seq 0 after 2^32-1 released: the window wrapped")
	}
}

func TestReorder_PushAllocs(t *testing.T) {
	var r reorderBuffer
	ready := make([][]byte, 0, ReorderWindow+1)
	payload := make([]byte, 100)
	seq := uint32(0)
	allocs := testing.AllocsPerRun(1000, func() {
		ready, _ = r.push(ready[:0], seq+1, payload)
		ready, _ = r.push(ready[:0], seq, payload)
		seq += 2
	})
	if allocs != 0 {
		t.Fatalf("push allocs = %v, want 0", allocs)
	}
}

// TestReorder_NoSlotsWhileInOrder: the slot array exists only while a gap is open, so an
// idle stream (records in order) holds none (idle_stream_memory bench row).
func TestReorder_NoSlotsWhileInOrder(t *testing.T) {
	var r reorderBuffer
	if _, err := r.push(nil, 0, rec(0, 1)); err != nil || r.held != nil {
		t.Fatalf("in order: err %v, slots held %v", err, r.held != nil)
	}
	if _, err := r.push(nil, 2, rec(2, 1)); err != nil || r.held == nil {
		t.Fatalf("gap: err %v, slots held %v, want held", err, r.held != nil)
	}
	ready, err := r.push(nil, 1, rec(1, 1))
	if err != nil || len(ready) != 2 || r.held != nil {
		t.Fatalf("gap repaired: %d released, err %v, slots held %v; want 2 and none held", len(ready), err, r.held != nil)
	}
	if _, err := r.push(nil, 5, rec(5, 1)); err != nil {
		t.Fatal(err)
	}
	r.reset()
	if r.held != nil || r.pendingCount != 0 {
		t.Fatal("reset kept the slots")
	}
}
