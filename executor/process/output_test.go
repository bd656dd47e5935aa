package process_test

import (
	"fmt"
	"testing"

	"github.com/execlab/executor/executor/process"
)

// 50,000-chunk cap evicts the oldest; a full read fits the 262,144-value budget.
func TestOutputLog_ChunkCapEvictsOldest(t *testing.T) {
	l := process.NewOutputLog(process.DefaultMaxRetainedBytes, process.DefaultMaxRetainedChunks)
	const total = process.DefaultMaxRetainedChunks + 10
	for seq := uint64(1); seq <= total; seq++ {
		l.Push(seq, []byte{'x'})
	}
	if l.Len() != process.DefaultMaxRetainedChunks {
		t.Fatalf("retained chunks = %d, want %d", l.Len(), process.DefaultMaxRetainedChunks)
	}
	got := l.Collect(0, -1)
	if len(got) != process.DefaultMaxRetainedChunks || got[0].Seq != 11 || got[len(got)-1].Seq != total {
		t.Fatalf("collected %d chunks seq %d..%d, want %d chunks seq 11..%d", len(got), got[0].Seq, got[len(got)-1].Seq, process.DefaultMaxRetainedChunks, total)
	}
	// JSON values of a full read result: root object, chunks array, 4 per chunk
	// (object, seq, stream, chunk), nextSeq, exited, exitCode, closed, failure,
	// sandboxDenied; plus the response envelope (object, id).
	values := 2 + 4*len(got) + 6 + 2
	if values > 262_144 {
		t.Fatalf("a full read has %d JSON values, over the 262,144 budget", values)
	}
}

func TestOutputLog_ByteCapEvictsOldest(t *testing.T) {
	l := process.NewOutputLog(10, 100)
	for seq := uint64(1); seq <= 5; seq++ {
		l.Push(seq, []byte(fmt.Sprintf("%03d", seq))) // 3 bytes each
	}
	got := l.Collect(0, -1)
	if len(got) != 3 || got[0].Seq != 3 || l.Bytes() != 9 {
		t.Fatalf("retained %d chunks from seq %d (%d bytes), want 3 from seq 3 (9 bytes)", len(got), got[0].Seq, l.Bytes())
	}
	// afterSeq before the oldest retained chunk: eviction is silent, reads start there.
	if got := l.Collect(1, -1); len(got) != 3 || got[0].Seq != 3 {
		t.Fatalf("collect(after 1) = %d chunks from %d, want 3 from seq 3", len(got), got[0].Seq)
	}
	if got := l.Collect(5, -1); len(got) != 0 {
		t.Fatalf("collect(after 5) = %d chunks, want 0", len(got))
	}
}

func TestOutputLog_RingWrapsInOrder(t *testing.T) {
	l := process.NewOutputLog(1<<20, 20)
	for seq := uint64(1); seq <= 1000; seq++ {
		l.Push(seq, []byte{byte(seq)})
		got := l.Collect(0, -1)
		for i := 1; i < len(got); i++ {
			if got[i].Seq != got[i-1].Seq+1 {
				t.Fatalf("after push %d: seqs not contiguous: %d then %d", seq, got[i-1].Seq, got[i].Seq)
			}
		}
		if got[len(got)-1].Seq != seq {
			t.Fatalf("after push %d: newest = %d", seq, got[len(got)-1].Seq)
		}
	}
}

// The output pump pauses before its next read only after a bulk read that did not fill
// its buffer: a full read means more is waiting, a short one is interactive output.
func TestPauseAfterRead_Rule(t *testing.T) {
	for _, tc := range []struct {
		n    int
		full bool
		want bool
	}{
		{1, false, false},
		{process.FlowingReadBytes - 1, false, false},
		{process.FlowingReadBytes, false, true},
		{100 << 10, false, true},
		{process.FlowingReadBytes, true, false},
		{256 << 10, true, false},
	} {
		if got := process.PauseAfterRead(tc.n, tc.full); got != tc.want {
			t.Errorf("PauseAfterRead(%d, full=%v) = %v, want %v", tc.n, tc.full, got, tc.want)
		}
	}
}
