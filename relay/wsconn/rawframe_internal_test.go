package wsconn

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// naiveMask is RFC 6455 §5.3 byte by byte: byte i of the payload XOR key[i mod 4].
func naiveMask(payload []byte, key [4]byte) []byte {
	out := make([]byte, len(payload))
	for i, b := range payload {
		out[i] = b ^ key[i%4]
	}
	return out
}

// parseMaskedFrame reads one client frame as a server does: it checks FIN, the binary opcode,
// the MASK bit and the minimal length encoding, and returns the unmasked payload.
func parseMaskedFrame(t *testing.T, b []byte) []byte {
	t.Helper()
	if b[0] != 0x82 || b[1]&0x80 == 0 {
		t.Fatalf("header %#x %#x: want FIN+binary and MASK", b[0], b[1])
	}
	n, rest := int(b[1]&0x7f), b[2:]
	switch n {
	case 126:
		n, rest = int(binary.BigEndian.Uint16(rest)), rest[2:]
		if n <= 125 {
			t.Fatalf("length %d in 16 bits: not minimal", n)
		}
	case 127:
		n, rest = int(binary.BigEndian.Uint64(rest)), rest[8:]
		if n <= 0xffff {
			t.Fatalf("length %d in 64 bits: not minimal", n)
		}
	}
	key := [4]byte(rest[:4])
	rest = rest[4:]
	if len(rest) != n {
		t.Fatalf("frame carries %d payload bytes, header says %d", len(rest), n)
	}
	return naiveMask(rest, key)
}

// TestMaskedFrame_MatchesRFC: every length class and every head/tail split (so every key
// rotation and tail alignment) gives a frame a server unmasks to head ‖ tail.
func TestMaskedFrame_MatchesRFC(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, n := range []int{1, 7, 8, 31, 32, 33, 125, 126, 127, 1000, 0xffff, 0x10000, 61527, MaxMessageSize} {
		msg := make([]byte, n)
		for i := range msg {
			msg[i] = byte(rng.Uint32())
		}
		for _, cut := range []int{0, 1, 2, 3, 5, n / 2, n - 1, n} {
			if cut < 0 || cut > n {
				continue
			}
			key := [4]byte{byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32())}
			prefix := []byte{0xAA}
			b := appendMaskedFrame(append([]byte(nil), prefix...), key, msg[:cut], msg[cut:])
			if b[0] != 0xAA {
				t.Fatalf("n=%d cut=%d: dst's bytes changed", n, cut)
			}
			if got := parseMaskedFrame(t, b[1:]); !bytes.Equal(got, msg) {
				t.Fatalf("n=%d cut=%d: unmasked payload differs from head ‖ tail", n, cut)
			}
			if len(b)-1 > maxFrameHeader+n {
				t.Fatalf("n=%d: frame of %d bytes, more than the header bound allows", n, len(b)-1)
			}
		}
	}
}

// TestMaskCopy_AnyOffset: the word-wise mask equals the byte-wise one from any payload offset.
func TestMaskCopy_AnyOffset(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	key := [4]byte{0x12, 0x34, 0x56, 0x78}
	k := binary.LittleEndian.Uint32(key[:])
	full := make([]byte, 300)
	for i := range full {
		full[i] = byte(rng.Uint32())
	}
	want := naiveMask(full, key)
	for pos := 0; pos < 40; pos++ {
		for _, n := range []int{0, 1, 3, 8, 9, 32, 63, 64, 65, 200} {
			got := make([]byte, n)
			maskCopy(got, full[pos:pos+n], k, pos)
			if !bytes.Equal(got, want[pos:pos+n]) {
				t.Fatalf("pos %d n %d: word-wise mask differs", pos, n)
			}
		}
	}
}

// TestMaskedFrame_AllocsPooled pins the raw write's framing: into a buffer with room it
// allocates nothing.
func TestMaskedFrame_AllocsPooled(t *testing.T) {
	head, tail := make([]byte, 60), make([]byte, 61456)
	buf := make([]byte, 0, 64<<10)
	var key [4]byte
	if got := testing.AllocsPerRun(100, func() { buf = appendMaskedFrame(buf[:0], key, head, tail) }); got != 0 {
		t.Errorf("appendMaskedFrame: got %v allocs per run, want 0", got)
	}
}

func BenchmarkMaskedFrame_Record(b *testing.B) {
	head, tail := make([]byte, 60), make([]byte, 61456)
	buf := make([]byte, 0, 64<<10)
	var key [4]byte
	b.SetBytes(int64(len(head) + len(tail)))
	for b.Loop() {
		buf = appendMaskedFrame(buf[:0], key, head, tail)
	}
}

// TestServerFrameHeader_MatchesRFC: an accepted connection's header (no MASK bit, no key)
// carries every length class in its shortest form.
func TestServerFrameHeader_MatchesRFC(t *testing.T) {
	for _, n := range []int{0, 1, 125, 126, 127, 0xffff, 0x10000, 61516, MaxMessageSize} {
		b := appendFrameHeader([]byte{0xAA}, n, false, [4]byte{1, 2, 3, 4})[1:]
		if b[0] != 0x82 || b[1]&0x80 != 0 {
			t.Fatalf("n=%d: header %#x %#x: want FIN+binary, no MASK", n, b[0], b[1])
		}
		var got, size int
		switch l := int(b[1] & 0x7f); {
		case n <= 125:
			got, size = l, 2
		case n <= 0xffff:
			got, size = int(binary.BigEndian.Uint16(b[2:])), 4
			if l != 126 {
				t.Fatalf("n=%d: length code %d, want 126", n, l)
			}
		default:
			got, size = int(binary.BigEndian.Uint64(b[2:])), 10
			if l != 127 {
				t.Fatalf("n=%d: length code %d, want 127", n, l)
			}
		}
		if got != n || len(b) != size {
			t.Fatalf("n=%d: header says %d in %d bytes, want %d bytes", n, got, len(b), size)
		}
	}
}
