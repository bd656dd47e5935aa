package process_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/execlab/executor/executor/process"
)

// TestOutputAck_BacklogFootprint: a lossless process whose harness is away (detached)
// fills its unacknowledged-output bound with output of every read size (seq writes 4 KiB
// blocks; the reader takes whatever the pipe holds), then blocks. What the retention costs
// in memory stays close to the bound: the backing arrays of the retained chunks are at most
// an eighth above the retained bytes (no half-empty read buffer kept per chunk), and the
// heap after a collection is the bound plus a small base. This is the executor's share of
// issue 14's "executor under 64 MiB plus its bound" (the soak, EXECUTOR_SOAK=1, measures
// RSS end to end).
func TestOutputAck_BacklogFootprint(t *testing.T) {
	const bound = process.DefaultMaxUnackedBytes
	m := newManager(t, &process.Options{MaxUnackedBytes: bound})
	p := startParams("p", tmpURI(t), "seq", "1", "30000000") // about 250 MB: more than the bound
	p.OutputAck = true
	mustStart(t, m, p)

	deadline := time.Now().Add(25 * time.Second)
	var data, backing int
	for {
		var ok bool
		data, backing, ok = m.RetainedFootprint("p")
		if !ok {
			t.Fatal("process gone")
		}
		if data >= bound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("retained only %d bytes after 25 s, want the bound %d", data, bound)
		}
		time.Sleep(10 * time.Millisecond)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("retained %d MiB in %d MiB of backing arrays; heap after GC %d MiB (HeapInuse %d MiB)",
		data>>20, backing>>20, ms.HeapAlloc>>20, ms.HeapInuse>>20)
	if data > bound+256<<10 {
		t.Errorf("retained %d bytes, want at most the bound %d plus one read", data, bound)
	}
	if backing > data+data/8 {
		t.Errorf("retained chunks hold %d bytes of backing arrays for %d bytes of output, want at most 1/8 more", backing, data)
	}
	if limit := uint64(bound + bound/8 + 16<<20); ms.HeapAlloc > limit {
		t.Errorf("heap after GC %d MiB with a %d MiB backlog, want at most %d MiB", ms.HeapAlloc>>20, bound>>20, limit>>20)
	}
}
