package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/execlab/executor/executor/protocol"
)

// oneshot_local: latency of /bin/true from process/start to process/closed over a local
// WebSocket, one process at a time. A sample is the median of oneshotPerSample runs, in
// milliseconds. Goal: ≤ 0.1× the reference.

func measureOneshotLocal(ctx context.Context, e *Env, side *Side) (float64, error) {
	sess, err := side.shared(ctx)
	if err != nil {
		return 0, err
	}
	return medianLatency(e, func() (time.Duration, error) {
		out, err := sess.runProcess(ctx, protocol.ProcessStartParams{
			ProcessID: side.processID("oneshot"),
			Argv:      []string{"/bin/true"},
			Cwd:       "file:///",
			Env:       map[string]string{},
		}, func(o protocol.ProcessOutputNotification) error {
			return fmt.Errorf("%w: /bin/true printed %d bytes on %s", errDataLoss, len(o.Chunk), o.Stream)
		})
		if err != nil {
			return 0, err
		}
		if out.exitCode != 0 || out.lastSeq != 2 {
			return 0, fmt.Errorf("%w: /bin/true exited %d with close seq %d, want 0 and 2", errDataLoss, out.exitCode, out.lastSeq)
		}
		return out.elapsed, nil
	})
}
