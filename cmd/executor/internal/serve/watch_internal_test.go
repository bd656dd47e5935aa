package serve

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestContainsQuoted_MatchesBytesContains compares containsQuoted with bytes.Contains on
// quote-dense random inputs and on the marks themselves at every position.
func TestContainsQuoted_MatchesBytesContains(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(`"process/tarenbld`)
	for _, mark := range [][]byte{markStart, markEnabled} {
		for range 5000 {
			b := make([]byte, rng.IntN(40))
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			if rng.IntN(4) == 0 {
				at := rng.IntN(len(b) + 1)
				b = append(b[:at:at], append(append([]byte(nil), mark...), b[at:]...)...)
			}
			if got, want := containsQuoted(b, mark), bytes.Contains(b, mark); got != want {
				t.Fatalf("containsQuoted(%q, %q) = %v, want %v", b, mark, got, want)
			}
		}
	}
	big := []byte(`{"id":3,"method":"fs/writeBlock","params":{"chunk":"` + strings.Repeat("QUJD", 1<<18) + `"}}`)
	if containsQuoted(big, markStart) {
		t.Fatal("found process/start in an fs/writeBlock message")
	}
}

func BenchmarkContainsQuoted_WriteBlock(b *testing.B) {
	msg := []byte(`{"id":3,"method":"fs/writeBlock","params":{"handleId":"h","offset":0,"chunk":"` + strings.Repeat("QUJD", 349526) + `"}}`)
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if containsQuoted(msg, markStart) {
			b.Fatal("unexpected match")
		}
	}
}
