package mux

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A flood of drop warnings logs the burst, then at most dropWarnPerSecond a second, and
// the first warning after a suppression reports the count (issue 13: malformed-frame
// warnings were not rate limited).
func TestWarnLimiter_FloodIsBounded(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	now := time.Unix(1000, 0)
	w := newWarnLimiter()
	w.now = func() time.Time { return now }
	for range 10000 { // one instant: only the burst passes
		w.warn(log, "dropping malformed Noise relay frame from harness")
	}
	if got := strings.Count(buf.String(), "dropping"); got != dropWarnBurst {
		t.Fatalf("logged %d warnings in a burst of 10000, want %d", got, dropWarnBurst)
	}
	buf.Reset()
	now = now.Add(time.Second) // refills dropWarnPerSecond
	for range 1000 {
		w.warn(log, "dropping malformed Noise relay frame from harness")
	}
	out := buf.String()
	if got := strings.Count(out, "dropping"); got != dropWarnPerSecond {
		t.Fatalf("logged %d warnings in the next second, want %d", got, dropWarnPerSecond)
	}
	if !strings.Contains(out, "suppressed_warnings=9900") {
		t.Fatalf("first warning after the flood does not count the suppressed ones:\n%s", out)
	}
}
