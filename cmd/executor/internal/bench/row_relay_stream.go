package bench

import "context"

// relay_stream: one stream's throughput executor → rendezvous → harness with Noise:
// `head -c 256MiB /dev/zero` (16 MiB with --quick) run by the side's executor in remote
// mode (ours: `executor remote`; reference: `codex exec-server --remote`), both registered
// with our registry + rendezvous in the bench process and reached by our harness
// (harness.Dial) over one long-lived connection. Every byte is counted and checked to be
// zero. MiB/s from process/start to the last event. Goal: ours ≥ 200 MiB/s and ≥ 2× the
// reference.

func measureRelayStream(ctx context.Context, e *Env, side *Side) (float64, error) {
	sess, err := side.remoteShared(ctx, e)
	if err != nil {
		return 0, err
	}
	size := quick(e, int64(relayStreamBytes), relayStreamBytesQuick)
	return streamZeros(ctx, e, sess, side.processID("relay"), size)
}
