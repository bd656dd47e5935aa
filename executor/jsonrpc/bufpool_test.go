package jsonrpc

import "testing"

func TestPoolClass(t *testing.T) {
	tests := []struct{ n, class int }{
		{0, -1}, {1, 0}, {minPooled, 0}, {minPooled + 1, 1}, {64 << 10, 4}, {350 << 10, 7},
		{1 << 20, 8}, {maxPooled, poolClasses - 1}, {maxPooled + 1, -1},
	}
	for _, tt := range tests {
		if got := poolClass(tt.n); got != tt.class {
			t.Errorf("poolClass(%d): got %d, want %d", tt.n, got, tt.class)
		}
	}
}

// TestGetBuffer_SizeClasses: a hint in the pooled range gets an empty buffer of its
// class; small and huge hints get nil (plain append); putBuffer keeps only exact class
// capacities.
func TestGetBuffer_SizeClasses(t *testing.T) {
	if b := getBuffer(100); b != nil {
		t.Errorf("getBuffer(100): got cap %d, want nil", cap(b))
	}
	if b := getBuffer(maxPooled + 1); b != nil {
		t.Errorf("getBuffer(maxPooled+1): got cap %d, want nil", cap(b))
	}
	b := getBuffer(350 << 10)
	if len(b) != 0 || cap(b) != 512<<10 {
		t.Fatalf("getBuffer(350 KiB): got len %d cap %d, want 0, 512 KiB", len(b), cap(b))
	}
	b = append(b, "data"...)
	putBuffer(b)
	putBuffer(make([]byte, 0, 300<<10)) // not a class capacity: dropped
	if c := getBuffer(300 << 10); len(c) != 0 || cap(c) != 512<<10 {
		t.Errorf("after put: got len %d cap %d, want 0, 512 KiB", len(c), cap(c))
	}
}

// hinted is a params value with a large encoding that states its size.
type hinted struct{ payload []byte }

func (h *hinted) AppendJSON(b []byte) []byte {
	b = append(b, '"')
	b = append(b, h.payload...)
	return append(b, '"')
}

func (h *hinted) JSONSizeHint() int { return len(h.payload) + 2 }

// TestEncodeNotification_PooledBufferFits: a hinted value is encoded into a pooled
// buffer with room to spare (no growth), and the bytes are the plain encoding.
func TestEncodeNotification_PooledBufferFits(t *testing.T) {
	h := &hinted{payload: make([]byte, 300<<10)}
	for i := range h.payload {
		h.payload[i] = 'A'
	}
	b, err := encodeNotification("process/output", h)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"method":"process/output","params":"` + string(h.payload) + `"}`
	if string(b) != want {
		t.Fatalf("got %d bytes, want the %d-byte plain encoding", len(b), len(want))
	}
	if cap(b) != 512<<10 {
		t.Errorf("got cap %d, want the 512 KiB class (no growth)", cap(b))
	}
	putBuffer(b)
}

// BenchmarkEncodeNotification_Pooled is the connection's share of a stdout stream: the
// envelope around a 256 KiB hinted value, encoded into a pooled buffer and returned.
func BenchmarkEncodeNotification_Pooled(b *testing.B) {
	h := &hinted{payload: make([]byte, 256<<10)}
	b.SetBytes(int64(len(h.payload)))
	b.ReportAllocs()
	for b.Loop() {
		buf, err := encodeNotification("process/output", h)
		if err != nil {
			b.Fatal(err)
		}
		putBuffer(buf)
	}
}
