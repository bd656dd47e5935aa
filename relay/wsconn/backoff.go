package wsconn

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is a doubling delay schedule. The zero value is the executor's rendezvous redial
// schedule: base 1 s doubling to 30 s, each delay uniform in [base/2, base]
// (spec/relay-noise.md §11). Not safe for concurrent use.
type Backoff struct {
	// Initial is the first base. Default BackoffInitial (1 s).
	Initial time.Duration
	// Max caps the base. Default BackoffMax (30 s).
	Max time.Duration
	// Spread turns a base into the actual delay. Nil means uniform in [base/2, base].
	Spread func(base time.Duration) time.Duration

	base time.Duration // current base; 0 before the first Next
}

// Next returns the delay before the next attempt and doubles the base (up to Max).
func (b *Backoff) Next() time.Duration {
	initial, limit := b.Initial, b.Max
	if initial <= 0 {
		initial = BackoffInitial
	}
	if limit <= 0 {
		limit = BackoffMax
	}
	if b.base == 0 {
		b.base = initial
	}
	base := b.base
	b.base = min(b.base*2, limit)
	if b.Spread != nil {
		return b.Spread(base)
	}
	return HalfJitter(base)
}

// Reset makes the next delay start from Initial again (after a successful upgrade).
func (b *Backoff) Reset() { b.base = 0 }

// HalfJitter returns a delay uniform in [base/2, base].
func HalfJitter(base time.Duration) time.Duration {
	half := base / 2
	if half <= 0 {
		return base
	}
	return half + rand.N(base-half+1)
}

// Sleep waits for d or until ctx is done, returning ctx.Err() in that case.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
