package shellsnap

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a manual clock for the backoff.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTestCache() (*Cache, *fakeClock) {
	c := NewCache()
	clk := &fakeClock{t: time.Unix(1000, 0)}
	c.now = clk.now
	return c, clk
}

func counting(n *int, s *Snapshot, err error) CaptureFunc {
	return func(context.Context) (*Snapshot, error) { *n++; return s, err }
}

func TestCacheHitAndLRU(t *testing.T) {
	c, _ := newTestCache()
	defer c.Close()
	ctx := context.Background()
	snap := &Snapshot{Kind: KindBash}
	var n int
	for i := range MaxEntries + 1 {
		if s, err := c.Get(ctx, strconv.Itoa(i), counting(&n, snap, nil)); s != snap || err != nil {
			t.Fatalf("Get %d = %v, %v", i, s, err)
		}
	}
	if n != MaxEntries+1 || c.Len() != MaxEntries {
		t.Fatalf("%d captures, %d entries", n, c.Len())
	}
	// #1 and #17 (keys "1", "16") are cached; "0" was evicted (spec §3.3 probe).
	for _, k := range []string{"1", "16"} {
		_, _ = c.Get(ctx, k, counting(&n, snap, nil))
	}
	if n != MaxEntries+1 {
		t.Fatalf("cached keys re-captured: %d", n)
	}
	_, _ = c.Get(ctx, "0", counting(&n, snap, nil))
	if n != MaxEntries+2 {
		t.Fatalf("evicted key not re-captured: %d", n)
	}
}

// The reference's failure policy (§3.3): runs at t=0, 0, +1.2 s, +2.4 s, +3.6 s
// captured 1, 0, 1, 1, 0 times.
func TestCacheBackoffAndAttempts(t *testing.T) {
	c, clk := newTestCache()
	defer c.Close()
	ctx := context.Background()
	var n int
	fail := counting(&n, nil, errors.New("boom"))
	want := []int{1, 1, 2, 3, 3}
	steps := []time.Duration{0, 0, 1200 * time.Millisecond, 1200 * time.Millisecond, 1200 * time.Millisecond}
	for i, d := range steps {
		clk.add(d)
		if s, err := c.Get(ctx, "k", fail); s != nil || err != nil {
			t.Fatalf("step %d: %v, %v", i, s, err)
		}
		if n != want[i] {
			t.Fatalf("step %d: %d captures, want %d", i, n, want[i])
		}
	}
	// Success after a failure is cached.
	var m int
	c2, clk2 := newTestCache()
	defer c2.Close()
	_, _ = c2.Get(ctx, "k", counting(&m, nil, errors.New("x")))
	clk2.add(RetryBackoff)
	snap := &Snapshot{}
	if s, _ := c2.Get(ctx, "k", counting(&m, snap, nil)); s != snap {
		t.Fatal("retry after backoff did not capture")
	}
	if s, _ := c2.Get(ctx, "k", counting(&m, nil, errors.New("x"))); s != snap || m != 2 {
		t.Fatalf("success not cached: %v %d", s, m)
	}
}

func TestCacheSharesConcurrentCapture(t *testing.T) {
	c, _ := newTestCache()
	defer c.Close()
	release := make(chan struct{})
	var captures atomic.Int32
	snap := &Snapshot{}
	capture := func(context.Context) (*Snapshot, error) {
		captures.Add(1)
		<-release
		return snap, nil
	}
	var wg sync.WaitGroup
	got := make([]*Snapshot, 4)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], _ = c.Get(context.Background(), "k", capture)
		}()
	}
	for deadline := time.Now().Add(5 * time.Second); captures.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if captures.Load() != 1 {
		t.Fatalf("%d captures", captures.Load())
	}
	for i, s := range got {
		if s != snap {
			t.Fatalf("waiter %d got %v", i, s)
		}
	}
}

func TestCacheCloseCancelsCapture(t *testing.T) {
	c, _ := newTestCache()
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := c.Get(context.Background(), "k", func(ctx context.Context) (*Snapshot, error) {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		})
		done <- err
	}()
	<-started
	c.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the capturing start gets a fallback, not %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not cancel the capture")
	}
	if _, err := c.Get(context.Background(), "k", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
}

func TestCacheCaptureDeadline(t *testing.T) {
	c, _ := newTestCache()
	defer c.Close()
	var dl time.Time
	_, _ = c.Get(context.Background(), "k", func(ctx context.Context) (*Snapshot, error) {
		dl, _ = ctx.Deadline()
		return &Snapshot{}, nil
	})
	if left := time.Until(dl); left <= CaptureTimeout-time.Second || left > CaptureTimeout {
		t.Fatalf("capture deadline in %v, want about %v", left, CaptureTimeout)
	}
}

func TestKey(t *testing.T) {
	r := &Request{ScopeID: "s", Shell: ShellInfo{"bash", "/bin/bash"}}
	a := Key(r, "/w", nil, nil)
	if a != Key(r, "/w", nil, nil) {
		t.Fatal("key not stable")
	}
	for _, b := range []string{Key(r, "/x", nil, nil), Key(r, "/w", map[string]any{"inherit": "none"}, nil),
		Key(r, "/w", nil, map[string]any{"p": 1}), Key(&Request{ScopeID: "t", Shell: r.Shell}, "/w", nil, nil),
		Key(&Request{ScopeID: "s", Shell: ShellInfo{"bash", "bash"}}, "/w", nil, nil)} {
		if a == b {
			t.Fatalf("key collision %s", a)
		}
	}
}
