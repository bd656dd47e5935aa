package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/execlab/executor/executor/protocol"
)

// watchmissing_latency: fs/watchMissing on a missing file (answer must be watching:true),
// then the bench creates the file itself and waits for fs/missingChanged with that
// watchId: latency from the create to the notification's arrival, median of
// oneshotPerSample watches (one at a time, a new generation each), over a local
// WebSocket. Goal: ≤ 100 ms (capabilities-0.171.0.md §7; the reference is informative).

func measureWatchMissingLatency(ctx context.Context, e *Env, side *Side) (float64, error) {
	sess, err := side.shared(ctx)
	if err != nil {
		return 0, err
	}
	dir, err := os.MkdirTemp("/var/tmp", "executor-bench-watch-")
	if err != nil {
		return 0, fmt.Errorf("creating watch directory: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "appears")
	return medianLatency(e, func() (time.Duration, error) {
		sess.nextWatchID++
		id := sess.nextWatchID
		var res protocol.FsWatchMissingResult
		if err := sess.call(ctx, protocol.MethodFsWatchMissing, map[string]any{"watchId": id, "missing": []protocol.PathURI{protocol.FromNative(path)}}, &res); err != nil {
			return 0, err
		}
		if !res.Watching {
			return 0, fmt.Errorf("fs/watchMissing %d on a missing path answered watching:false", id)
		}
		start := time.Now()
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			return 0, err
		}
		defer os.Remove(path)
		timer := time.NewTimer(watchMissingTimeout)
		defer timer.Stop()
		for {
			select {
			case got := <-sess.missingChanged:
				if got == id {
					return time.Since(start), nil
				}
			case <-timer.C:
				return 0, fmt.Errorf("no fs/missingChanged for watch %d within %v", id, watchMissingTimeout)
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
	})
}
