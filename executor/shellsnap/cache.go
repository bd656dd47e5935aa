package shellsnap

import (
	"container/list"
	"context"
	"errors"
	"sync"
	"time"
)

// CaptureFunc runs one capture under ctx (which carries CaptureTimeout and is
// cancelled when the cache closes) and returns the parsed snapshot.
type CaptureFunc func(ctx context.Context) (*Snapshot, error)

// Cache is a session's snapshot cache (§3.3): at most MaxEntries keys, least recently
// used evicted first; a failed capture is retried after RetryBackoff, at most
// MaxFailedAttempts times per key; concurrent starts with one key share one capture.
//
// Captures run in the calling request's goroutine; the Cache starts none. Close
// cancels running captures (their processes are killed by the runner) and makes later
// lookups fall back. Safe for concurrent use.
type Cache struct {
	ctx    context.Context // cancelled by Close; the lifetime of every capture
	cancel context.CancelFunc
	now    func() time.Time

	// mu guards lru and entries; never held while a capture runs.
	mu      sync.Mutex
	lru     *list.List // of *entry, most recently used first
	entries map[string]*list.Element
}

// entry is one key's state. Fields are guarded by Cache.mu.
type entry struct {
	key      string
	snap     *Snapshot     // set after a successful capture
	running  chan struct{} // non-nil while a capture runs; closed when it ends
	failures int
	lastFail time.Time
}

// ErrClosed is returned by Get after Close.
var ErrClosed = errors.New("shellsnap: cache closed")

// NewCache returns an empty cache. It starts nothing.
func NewCache() *Cache {
	ctx, cancel := context.WithCancel(context.Background())
	return &Cache{ctx: ctx, cancel: cancel, now: time.Now, lru: list.New(), entries: make(map[string]*list.Element)}
}

// Close cancels running captures; later Gets return ErrClosed. Idempotent.
func (c *Cache) Close() { c.cancel() }

// Len reports the number of cached keys.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// Get returns key's snapshot, capturing it with capture when none is cached and the
// failure policy allows an attempt. A nil snapshot with a nil error means "run the
// command unsnapshotted" (a failed, backed-off or abandoned capture). ctx is the
// request's: when it ends, a waiter stops waiting for another start's capture (that
// capture goes on for its own requester).
func (c *Cache) Get(ctx context.Context, key string, capture CaptureFunc) (*Snapshot, error) {
	if c.ctx.Err() != nil {
		return nil, ErrClosed
	}
	c.mu.Lock()
	e := c.touchLocked(key)
	for e.running != nil {
		ch := e.running
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, nil
		case <-c.ctx.Done():
			return nil, ErrClosed
		}
		c.mu.Lock()
	}
	if e.snap != nil {
		s := e.snap
		c.mu.Unlock()
		return s, nil
	}
	if e.failures >= MaxFailedAttempts || (e.failures > 0 && c.now().Sub(e.lastFail) < RetryBackoff) {
		c.mu.Unlock()
		return nil, nil
	}
	ch := make(chan struct{})
	e.running = ch
	c.mu.Unlock()

	cctx, cancel := context.WithTimeout(c.ctx, CaptureTimeout)
	s, err := capture(cctx)
	cancel()

	c.mu.Lock()
	e.running = nil
	if err != nil || s == nil {
		e.failures++
		e.lastFail = c.now()
		s = nil
	} else {
		e.snap = s
	}
	close(ch)
	c.mu.Unlock()
	return s, nil
}

// touchLocked returns key's entry, created if absent, marked most recently used; an
// insertion beyond MaxEntries evicts the least recently used entry (a capture running
// for it completes into the evicted entry, which nothing reads any more).
func (c *Cache) touchLocked(key string) *entry {
	if el, ok := c.entries[key]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*entry)
	}
	e := &entry{key: key}
	c.entries[key] = c.lru.PushFront(e)
	for c.lru.Len() > MaxEntries {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.entries, old.Value.(*entry).key)
	}
	return e
}
