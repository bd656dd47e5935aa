package jsonwire_test

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"testing"

	"github.com/execlab/executor/jsonwire"
)

// Error texts observed from codex 0.169.0 process/write chunk decoding.
func TestDecodeBase64_ReferenceErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"aGk", "Invalid padding"},
		{"ab", "Invalid padding"},
		{"YQ=", "Invalid padding"},
		{"aG=k", "Invalid symbol 61, offset 2."},
		{"a", "Invalid input length: 1"},
		{"AAAAA", "Invalid input length: 5"},
		{"abcd=", "Invalid symbol 61, offset 4."},
		{"aGk=\n", "Invalid symbol 10, offset 4."},
		{"aGk=\r\n", "Invalid symbol 61, offset 3."},
		{"AAAAAAAA\nAAA", "Invalid symbol 10, offset 8."},
		{"AAAA\n", "Invalid symbol 10, offset 4."},
		{"aG k=", "Invalid symbol 32, offset 2."},
		{"aGk==", "Invalid symbol 61, offset 3."},
		{"a-_=", "Invalid symbol 45, offset 1."},
		{"aGl=", "Invalid last symbol 108, offset 2."},
		{"YR==", "Invalid last symbol 82, offset 1."},
		{"YWJ=", "Invalid last symbol 74, offset 2."},
		{"=aGk", "Invalid symbol 61, offset 0."},
		{"aGk=aGk=", "Invalid symbol 61, offset 3."},
		{"é", "Invalid symbol 195, offset 0."},
		{"Y===", "Invalid symbol 61, offset 1."},
		{"YQ===", "Invalid symbol 61, offset 2."},
		{"AAAA====", "Invalid symbol 61, offset 4."},
		{"AA=A", "Invalid symbol 61, offset 2."},
		{"A=AA", "Invalid symbol 61, offset 1."},
		{"\x00AAA", "Invalid symbol 0, offset 0."},
	}
	for _, tt := range tests {
		out, err := jsonwire.DecodeBase64(tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("DecodeBase64(%q): got %q, %v; want error %q", tt.in, out, err, tt.want)
		}
	}
}

func TestDecodeBase64_Valid(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""}, {"YQ==", "a"}, {"YWI=", "ab"}, {"YWJj", "abc"}, {"aGVsbG8A/w==", "hello\x00\xff"},
		{"++//", "\xfb\xef\xff"},
	}
	for _, tt := range tests {
		out, err := jsonwire.DecodeBase64(tt.in)
		if err != nil || string(out) != tt.want {
			t.Errorf("DecodeBase64(%q): got %q, %v; want %q", tt.in, out, err, tt.want)
		}
	}
}

// The stdlib fast path and the reference-order check must agree on every input.
func TestDecodeBase64_FastAndSlowAgree(t *testing.T) {
	seed := uint64(42)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/===\n -_"
	for i := 0; i < 200000; i++ {
		b := make([]byte, rng.IntN(13))
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		out, err := jsonwire.DecodeBase64(string(b))
		slow := jsonwire.Base64ErrorForTest(string(b))
		if (err == nil) != (slow == nil) {
			t.Fatalf("%q: DecodeBase64 error %v, reference-order check %v", b, err, slow)
		}
		if err == nil && jsonwire.EncodeBase64(out) != string(b) {
			t.Fatalf("%q: decoded %q re-encodes to %q", b, out, jsonwire.EncodeBase64(out))
		}
	}
}

func TestEncodeBase64(t *testing.T) {
	in := []byte("any carnal pleas")
	if got, want := jsonwire.EncodeBase64(in), "YW55IGNhcm5hbCBwbGVhcw=="; got != want {
		t.Errorf("EncodeBase64: got %q, want %q", got, want)
	}
	if got := jsonwire.AppendBase64([]byte("x"), in); !bytes.Equal(got, []byte("xYW55IGNhcm5hbCBwbGVhcw==")) {
		t.Errorf("AppendBase64: got %q", got)
	}
}

// TestAppendBase64_MatchesStdlib: every length from 0 to 4 KiB and large blocks, random
// bytes, with and without a prefix (the SIMD encoder's block boundaries and tails).
func TestAppendBase64_MatchesStdlib(t *testing.T) {
	seed := uint64(16)
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	src := make([]byte, 1<<20+7)
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	lengths := []int{64 << 10, 256<<10 + 1, 1<<20 + 7}
	for n := 0; n <= 4096; n++ {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		for _, prefix := range []string{"", `{"chunk":"`} {
			got := jsonwire.AppendBase64([]byte(prefix), src[:n])
			want := prefix + base64.StdEncoding.EncodeToString(src[:n])
			if string(got) != want {
				t.Fatalf("%d bytes after %q: SIMD and encoding/base64 differ", n, prefix)
			}
		}
	}
}

func BenchmarkAppendBase64_256KiB(b *testing.B) {
	src := make([]byte, 256<<10)
	dst := make([]byte, 0, base64.StdEncoding.EncodedLen(len(src)))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		dst = jsonwire.AppendBase64(dst[:0], src)
	}
}

func BenchmarkStdlibBase64_256KiB(b *testing.B) {
	src := make([]byte, 256<<10)
	dst := make([]byte, base64.StdEncoding.EncodedLen(len(src)))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		base64.StdEncoding.Encode(dst, src)
	}
}

// TestDecodeBase64Into_MatchesStdlib: long inputs (the SIMD decoder's 32-byte blocks
// start at 45 bytes) with one byte replaced at every kind of position by something outside
// the alphabet, or the padding moved, must decode exactly as encoding/base64's strict
// decoder does (plus the reference's rejection of '\r' and '\n'), and fail with the
// reference-order error.
func TestDecodeBase64Into_MatchesStdlib(t *testing.T) {
	seed := uint64(1616)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	const bad = "=\n\r -_\\\"\x00\x80é"
	for i := 0; i < 20000; i++ {
		raw := make([]byte, rng.IntN(400))
		for j := range raw {
			raw[j] = byte(rng.Uint32())
		}
		src := []byte(base64.StdEncoding.EncodeToString(raw))
		if i%2 == 1 && len(src) > 0 {
			src[rng.IntN(len(src))] = bad[rng.IntN(len(bad))]
		}
		if i%7 == 3 && len(src) > 2 {
			src = src[:len(src)-rng.IntN(3)] // a short final quad
		}
		checkDecodeLikeStdlib(t, src)
	}
}

func checkDecodeLikeStdlib(t *testing.T, src []byte) {
	t.Helper()
	want, werr := base64.StdEncoding.Strict().DecodeString(string(src))
	if bytes.ContainsAny(src, "\r\n") {
		werr = base64.CorruptInputError(0)
	}
	got, err := jsonwire.DecodeBase64Into(make([]byte, 3), src)
	if (err == nil) != (werr == nil) {
		t.Fatalf("%d bytes %q…: DecodeBase64Into error %v, strict stdlib %v", len(src), src[:min(len(src), 60)], err, werr)
	}
	if err == nil && !bytes.Equal(got, want) {
		t.Fatalf("%d bytes: DecodeBase64Into and strict stdlib decode differently", len(src))
	}
	if slow := jsonwire.Base64ErrorForTest(string(src)); (slow == nil) != (err == nil) {
		t.Fatalf("%d bytes: DecodeBase64Into error %v, reference-order check %v", len(src), err, slow)
	}
}

// FuzzDecodeBase64Long puts the fuzzed bytes behind and in front of 48 valid symbols, so
// the SIMD decoder's block loop runs over them.
func FuzzDecodeBase64Long(f *testing.F) {
	for _, s := range []string{"", "aGk=", "AAAA", "aGk=\n", "YR==", "AA=A", "\x00AAA", "é"} {
		f.Add(s)
	}
	const block = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlq" // 48 symbols
	f.Fuzz(func(t *testing.T, s string) {
		checkDecodeLikeStdlib(t, []byte(block+s))
		checkDecodeLikeStdlib(t, []byte(s+block))
	})
}

// The decode of a 256 KiB chunk into a reused buffer allocates nothing.
func TestDecodeBase64Into_NoAllocs(t *testing.T) {
	src := []byte(base64.StdEncoding.EncodeToString(make([]byte, 256<<10)))
	dst := make([]byte, 0, 256<<10)
	if got := testing.AllocsPerRun(20, func() { dst, _ = jsonwire.DecodeBase64Into(dst[:0], src) }); got != 0 {
		t.Errorf("DecodeBase64Into into a large enough buffer: %v allocs, want 0", got)
	}
}

func BenchmarkDecodeBase64Into_256KiB(b *testing.B) {
	src := []byte(base64.StdEncoding.EncodeToString(make([]byte, 256<<10)))
	dst := make([]byte, 0, 256<<10)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = jsonwire.DecodeBase64Into(dst, src)
	}
}
