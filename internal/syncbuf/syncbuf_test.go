package syncbuf_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/execlab/executor/internal/syncbuf"
)

func TestBuffer_ConcurrentWrites(t *testing.T) {
	var b syncbuf.Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if n, err := b.Write([]byte("ab")); n != 2 || err != nil {
					t.Errorf("Write = %d, %v; want 2, nil", n, err)
				}
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("ab", 800) {
		t.Errorf("String() has %d bytes, want 1600 of \"ab\"", len(got))
	}
}
