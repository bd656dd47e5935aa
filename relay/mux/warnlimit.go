package mux

import (
	"log/slog"
	"sync"
	"time"
)

// warnLimiter rate-limits the per-frame drop warnings, which a peer controls: a socket
// flooding garbage must not flood the log (issue 13). It is a token bucket of
// dropWarnBurst warnings refilled at dropWarnPerSecond; a warning over the limit is
// counted, and the next one that passes reports how many were suppressed. The texts of
// the warnings that pass are unchanged (the reference's, spec/relay-noise.md §12.1).
//
// Safe for concurrent use (the read loop and the writer both warn).
type warnLimiter struct {
	mu         sync.Mutex // guards the fields below; held only to count
	tokens     float64
	last       time.Time
	suppressed int
	now        func() time.Time // injectable for tests
}

func newWarnLimiter() *warnLimiter {
	return &warnLimiter{tokens: dropWarnBurst, now: time.Now}
}

// warn logs msg at warn level unless the limit is spent.
func (w *warnLimiter) warn(log *slog.Logger, msg string, args ...any) {
	w.mu.Lock()
	now := w.now()
	if !w.last.IsZero() {
		w.tokens = min(dropWarnBurst, w.tokens+now.Sub(w.last).Seconds()*dropWarnPerSecond)
	}
	w.last = now
	if w.tokens < 1 {
		w.suppressed++
		w.mu.Unlock()
		return
	}
	w.tokens--
	n := w.suppressed
	w.suppressed = 0
	w.mu.Unlock()
	if n > 0 {
		args = append(args, "suppressed_warnings", n)
	}
	log.Warn(msg, args...)
}
