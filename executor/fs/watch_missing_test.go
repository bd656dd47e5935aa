package fs_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/executor/protocol"
)

// notes records fs/missingChanged notifications.
type notes struct{ ch chan uint64 }

func (n *notes) Notify(ctx context.Context, method string, params any) error {
	if method != protocol.MethodFsMissingChanged {
		panic("unexpected notification " + method)
	}
	select {
	case n.ch <- params.(*protocol.FsMissingChangedNotification).WatchID:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func newWatcher(t *testing.T) (*fs.MissingWatcher, *notes) {
	n := &notes{ch: make(chan uint64, 16)}
	w := fs.NewMissingWatcher(n)
	t.Cleanup(w.Close)
	return w, n
}

func watch(t *testing.T, w *fs.MissingWatcher, id uint64, present string, missing ...string) bool {
	t.Helper()
	p := &protocol.FsWatchMissingParams{WatchID: id}
	for _, m := range missing {
		p.Missing = append(p.Missing, uri(m))
	}
	if present != "" {
		u := uri(present)
		p.Present = &u
	}
	r, err := w.Watch(ctx, p)
	if err != nil {
		t.Fatalf("watch %d: %v", id, err)
	}
	return r.Watching
}

// expectFire waits up to within for notification id.
func expectFire(t *testing.T, n *notes, id uint64, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case got := <-n.ch:
		if got != id {
			t.Fatalf("fs/missingChanged for %d, want %d", got, id)
		}
	case <-time.After(within):
		t.Fatalf("no fs/missingChanged for %d within %v", id, within)
	}
	return time.Since(start)
}

// expectQuiet checks that nothing fires for a while.
func expectQuiet(t *testing.T, n *notes) {
	t.Helper()
	select {
	case got := <-n.ch:
		t.Fatalf("unexpected fs/missingChanged for %d", got)
	case <-time.After(150 * time.Millisecond):
	}
}

func TestWatchMissing_FiresOnceWhenPathAppears(t *testing.T) {
	dir := t.TempDir()
	w, n := newWatcher(t)
	if !watch(t, w, 1, "", filepath.Join(dir, "a")) {
		t.Fatal("watch on a missing path answered false")
	}
	os.WriteFile(filepath.Join(dir, "sibling"), nil, 0o644)
	expectQuiet(t, n)
	os.WriteFile(filepath.Join(dir, "a"), nil, 0o644)
	expectFire(t, n, 1, 2*time.Second)
	os.Remove(filepath.Join(dir, "a"))
	os.WriteFile(filepath.Join(dir, "a"), nil, 0o644)
	expectQuiet(t, n) // spent
	if watch(t, w, 1, "", filepath.Join(dir, "b")) {
		t.Fatal("a reused id armed a watch")
	}
}

func TestWatchMissing_AncestorsAndPresent(t *testing.T) {
	dir := t.TempDir()
	w, n := newWatcher(t)
	deep := filepath.Join(dir, "x", "y", "z")
	if !watch(t, w, 1, "", deep) {
		t.Fatal("watch on a missing chain answered false")
	}
	os.Mkdir(filepath.Join(dir, "x"), 0o755)
	expectFire(t, n, 1, 2*time.Second)

	if !watch(t, w, 2, "", deep) {
		t.Fatal("second watch answered false")
	}
	os.Mkdir(filepath.Join(dir, "x", "other"), 0o755)
	expectQuiet(t, n)
	os.RemoveAll(filepath.Join(dir, "x"))
	expectFire(t, n, 2, 2*time.Second)

	pd := filepath.Join(dir, "pd")
	os.Mkdir(pd, 0o755)
	if !watch(t, w, 3, pd, filepath.Join(dir, "q")) {
		t.Fatal("watch with present answered false")
	}
	os.WriteFile(filepath.Join(pd, "inner"), []byte("x"), 0o644)
	expectQuiet(t, n)
	os.Chmod(pd, 0o700)
	expectFire(t, n, 3, 2*time.Second)

	pf := filepath.Join(dir, "pf")
	os.WriteFile(pf, nil, 0o644)
	if !watch(t, w, 4, pf, filepath.Join(dir, "q")) {
		t.Fatal("watch with present file answered false")
	}
	os.Rename(pf, pf+".moved")
	expectFire(t, n, 4, 2*time.Second)
}

func TestWatchMissing_ReplacedSetIsSilent(t *testing.T) {
	dir := t.TempDir()
	w, n := newWatcher(t)
	watch(t, w, 10, "", filepath.Join(dir, "old"))
	if !watch(t, w, 11, "", filepath.Join(dir, "new")) {
		t.Fatal("replacement answered false")
	}
	if watch(t, w, 9, "", filepath.Join(dir, "lower")) {
		t.Fatal("a lower id armed a watch")
	}
	os.WriteFile(filepath.Join(dir, "old"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "lower"), nil, 0o644)
	expectQuiet(t, n)
	os.WriteFile(filepath.Join(dir, "new"), nil, 0o644)
	expectFire(t, n, 11, 2*time.Second)
}

func TestWatchMissing_Rules(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	os.Symlink("nowhere", filepath.Join(dir, "dangling"))
	w, _ := newWatcher(t)
	many := func(k int) []string {
		var out []string
		for i := range k {
			out = append(out, filepath.Join(dir, "m", string(rune('a'+i%26)), "x"))
		}
		return out
	}
	id := uint64(0)
	for _, c := range []struct {
		name    string
		present string
		missing []string
		want    bool
	}{
		{"id 0", "", []string{filepath.Join(dir, "a")}, false},
		{"empty", "", nil, false},
		{"65 paths", "", many(65), false},
		{"64 paths", "", many(64), true},
		{"existing", "", []string{filepath.Join(dir, "file")}, false},
		{"dangling symlink", "", []string{filepath.Join(dir, "dangling")}, false},
		{"parent is a file", "", []string{filepath.Join(dir, "file", "x")}, false},
		{"missing present", filepath.Join(dir, "nope"), []string{filepath.Join(dir, "a")}, false},
		{"dangling present", filepath.Join(dir, "dangling"), []string{filepath.Join(dir, "a")}, false},
		{"present file", filepath.Join(dir, "file"), []string{filepath.Join(dir, "a")}, true},
	} {
		if c.name != "id 0" {
			id++
		}
		if got := watch(t, w, id, c.present, c.missing...); got != c.want {
			t.Errorf("%s: watching = %v, want %v", c.name, got, c.want)
		}
	}
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestWatchMissing_CloseReleasesEverything arms, replaces and fires many sets and closes
// watchers with armed sets: no inotify descriptor stays open, and goleak (TestMain)
// checks that no goroutine outlives its watcher.
func TestWatchMissing_CloseReleasesEverything(t *testing.T) {
	dir := t.TempDir()
	before := openFDs(t)
	for i := range 20 {
		n := &notes{ch: make(chan uint64)} // unbuffered and never read: a fired set blocks in Notify
		w := fs.NewMissingWatcher(n)
		for id := uint64(1); id <= 5; id++ {
			p := &protocol.FsWatchMissingParams{WatchID: id, Missing: []protocol.PathURI{uri(filepath.Join(dir, "a", "b"))}}
			if r, _ := w.Watch(ctx, p); !r.Watching {
				t.Fatalf("round %d id %d: not watching", i, id)
			}
		}
		if i%2 == 0 { // fire: the goroutine blocks in Notify until Close cancels it
			os.Mkdir(filepath.Join(dir, "a"), 0o755)
			time.Sleep(20 * time.Millisecond)
			os.Remove(filepath.Join(dir, "a"))
		}
		w.Close()
		if r, _ := w.Watch(ctx, &protocol.FsWatchMissingParams{WatchID: 100, Missing: []protocol.PathURI{uri(filepath.Join(dir, "z"))}}); r.Watching {
			t.Fatal("a closed watcher armed a watch")
		}
	}
	if after := openFDs(t); after > before {
		t.Fatalf("%d descriptors open after closing every watcher, %d before", after, before)
	}
}

// TestWatchMissing_Latency measures creation → fs/missingChanged (goal ≤ 100 ms).
func TestWatchMissing_Latency(t *testing.T) {
	dir := t.TempDir()
	w, n := newWatcher(t)
	var worst time.Duration
	for i := range 20 {
		p := filepath.Join(dir, "f", "g")
		if !watch(t, w, uint64(i+1), "", p) {
			t.Fatal("not watching")
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		worst = max(worst, expectFire(t, n, uint64(i+1), time.Second))
		os.RemoveAll(filepath.Dir(p))
	}
	t.Logf("worst creation → fs/missingChanged latency over 20 watches: %v", worst)
	if worst > 100*time.Millisecond {
		t.Errorf("worst latency %v exceeds 100 ms", worst)
	}
}
