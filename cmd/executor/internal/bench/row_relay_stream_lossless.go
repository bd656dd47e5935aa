package bench

import (
	"context"
	"fmt"
)

// relay_stream_lossless: what acknowledged output (processOutputAck, the lossless mode of
// docs/reliability.md §4) costs on relay_stream. One sample streams relay_stream's
// `head -c 256MiB /dev/zero` (16 MiB with --quick) through our registry + rendezvous +
// Noise twice, from our remote executor: once on the shared connection (acknowledged
// output, our harness's default) and once on a fresh connection with
// harness.Options.DisableOutputAck (the released semantics), alternating which runs first.
// The figure is rate(on) / rate(off). Goal: ≥ 0.9 (acks cost at most 10 % of
// relay_stream). Ours only: a released executor has no lossless mode.

func measureRelayStreamLossless(ctx context.Context, e *Env, side *Side) (float64, error) {
	on, err := side.remoteShared(ctx, e)
	if err != nil {
		return 0, err
	}
	reg, ri, err := side.remoteExecutor(ctx, e)
	if err != nil {
		return 0, err
	}
	off, err := openRemoteSessionAck(ctx, reg.svc.URL, ri.env, reg.token, false)
	if err != nil {
		return 0, fmt.Errorf("connecting without acknowledged output: %w", err)
	}
	defer off.close()
	if !on.client.Capabilities().ProcessOutputAck {
		return 0, fmt.Errorf("%s does not advertise processOutputAck", side.Target.Name)
	}
	size := int64(relayStreamBytes)
	if e.Quick {
		size = relayStreamBytesQuick
	}
	sessions := []*session{on, off}
	if side.ids%2 == 1 {
		sessions[0], sessions[1] = off, on
	}
	rates := map[*session]float64{}
	for _, s := range sessions {
		r, err := streamZeros(ctx, e, s, side.processID("relay-lossless"), size)
		if err != nil {
			return 0, err
		}
		rates[s] = r
	}
	return rates[on] / rates[off], nil
}
