package bench

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/execlab/executor/executor/protocol"
)

// oneshot_remote: /bin/true through registry + rendezvous + the side's remote executor,
// each run on a fresh connection: from the start of harness.Dial (registry connect,
// rendezvous websocket, hybrid Noise handshake with the executor's registry validation)
// through initialize to process/closed. A sample is the median of oneshotRemotePerSample
// runs, in milliseconds. Goal (issue 7): ours ≤ 20 ms; the reference is shown for
// comparison.

func measureOneshotRemote(ctx context.Context, e *Env, side *Side) (float64, error) {
	reg, ri, err := side.remoteExecutor(ctx, e)
	if err != nil {
		return 0, err
	}
	n := quick(e, oneshotRemotePerSample, oneshotRemotePerSampleQuick)
	lat := make([]float64, 0, n)
	for range n {
		start := time.Now()
		sess, err := openRemoteSession(ctx, reg.svc.URL, ri.env, reg.token)
		if err != nil {
			return 0, fmt.Errorf("connecting: %w%s", err, ri.output.suffix())
		}
		_, err = sess.runQuiet(ctx, protocol.ProcessStartParams{
			ProcessID: side.processID("oneshot-remote"),
			Argv:      []string{"/bin/true"},
			Cwd:       "file:///",
			Env:       map[string]string{},
		}, "/bin/true")
		elapsed := time.Since(start) // connect included
		sess.close()
		if err != nil {
			return 0, err
		}
		lat = append(lat, float64(elapsed)/float64(time.Millisecond))
	}
	sort.Float64s(lat)
	return median(lat), nil
}
