package recbuf

import "testing"

// TestPutPoisons: with SetPoison a returned buffer is overwritten; a foreign capacity is
// ignored; Get returns empty buffers of capacity Cap.
func TestPutPoisons(t *testing.T) {
	SetPoison(true)
	defer SetPoison(false)
	b := append(Get(), "secret"...)
	if cap(b) != Cap {
		t.Fatalf("cap %d, want %d", cap(b), Cap)
	}
	Put(b)
	if string(b[:6]) == "secret" || b[0] != 0xEE {
		t.Fatalf("Put did not poison the buffer: %q", b[:6])
	}
	other := append(make([]byte, 0, 10), "keep"...)
	Put(other)
	if string(other) != "keep" {
		t.Fatalf("Put touched a foreign buffer: %q", other)
	}
	if g := Get(); len(g) != 0 || cap(g) != Cap {
		t.Fatalf("Get: len %d cap %d", len(g), cap(g))
	}
}

// TestGetPutAllocs: a Get/Put cycle allocates nothing once the pool is warm (below one on
// average: under the race detector sync.Pool drops some Puts on purpose).
func TestGetPutAllocs(t *testing.T) {
	Put(Get())
	if n := testing.AllocsPerRun(100, func() { Put(append(Get(), 1)) }); n >= 1 {
		t.Fatalf("%v allocations per Get/Put, want 0", n)
	}
}
