package bench

import (
	"context"
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
		return sess.runQuiet(ctx, protocol.ProcessStartParams{
			ProcessID: side.processID("oneshot"),
			Argv:      []string{"/bin/true"},
			Cwd:       "file:///",
			Env:       map[string]string{},
		}, "/bin/true")
	})
}
