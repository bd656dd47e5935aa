package bench

import (
	"context"
	"fmt"
)

// The on ÷ off rows: what one of our relay extensions costs on relay_stream. A sample
// streams relay_stream's `head -c 256MiB /dev/zero` (16 MiB with --quick) through our
// registry + rendezvous + Noise twice from our remote executor: on the shared connection
// (every extension on, our harness's default) and on a fresh connection with the
// extension switched off, alternating which runs first. The figure is rate(on) ÷
// rate(off); goal ≥ 0.9 (the extension costs at most 10 %). Ours only: a released
// executor has neither extension.
//
//   - relay_stream_lossless: acknowledged output (processOutputAck, the lossless mode of
//     docs/reliability.md §4); off = harness.Options.DisableOutputAck, the released
//     semantics.
//   - relay_stream_arq: relay ARQ v1 (per-stream acks and retained records,
//     docs/reliability.md §8); off = harness.RemoteOptions.DisableARQ, the released relay
//     stream.

func measureRelayStreamLossless(ctx context.Context, e *Env, side *Side) (float64, error) {
	return measureRelayOnOff(ctx, e, side, "relay-lossless", remoteSessionOpts{noOutputAck: true}, func(on *session) error {
		if !on.client.Capabilities().ProcessOutputAck {
			return fmt.Errorf("%s does not advertise processOutputAck", side.Target.Name)
		}
		return nil
	})
}

func measureRelayStreamARQ(ctx context.Context, e *Env, side *Side) (float64, error) {
	return measureRelayOnOff(ctx, e, side, "relay-arq", remoteSessionOpts{noARQ: true}, nil)
}

// measureRelayOnOff returns rate(on) ÷ rate(off), off being a fresh session opened with
// offOpts; check, when set, vets the shared session first.
func measureRelayOnOff(ctx context.Context, e *Env, side *Side, label string, offOpts remoteSessionOpts, check func(on *session) error) (float64, error) {
	on, err := side.remoteShared(ctx, e)
	if err != nil {
		return 0, err
	}
	if check != nil {
		if err := check(on); err != nil {
			return 0, err
		}
	}
	reg, ri, err := side.remoteExecutor(ctx, e)
	if err != nil {
		return 0, err
	}
	off, err := openRemoteSessionOpts(ctx, reg.svc.URL, ri.env, reg.token, offOpts)
	if err != nil {
		return 0, fmt.Errorf("connecting with %s off: %w%s", label, err, ri.output.suffix())
	}
	defer off.close()
	size := quick(e, int64(relayStreamBytes), relayStreamBytesQuick)
	sessions := []*session{on, off}
	if side.ids%2 == 1 {
		sessions[0], sessions[1] = off, on
	}
	rates := map[*session]float64{}
	for _, s := range sessions {
		r, err := streamZeros(ctx, e, s, side.processID(label), size)
		if err != nil {
			return 0, err
		}
		rates[s] = r
	}
	return rates[on] / rates[off], nil
}
