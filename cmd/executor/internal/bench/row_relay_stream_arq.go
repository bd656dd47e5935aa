package bench

import (
	"context"
	"fmt"
)

// relay_stream_arq: the cost of relay ARQ v1 (per-stream acks and retained records,
// docs/reliability.md §8) on relay_stream. Our remote executor streams relay_stream's
// 256 MiB (16 MiB with --quick) twice per sample: on the shared connection (our harness
// offers ARQ and our executor accepts it: the default) and on a fresh one whose harness does
// not offer it (harness.RemoteOptions.DisableARQ: the released relay stream, no acks),
// alternating which goes first. The figure is rate(on) ÷ rate(off); ≥ 0.9 means the acks
// cost at most 10 %.
func measureRelayStreamARQ(ctx context.Context, e *Env, side *Side) (float64, error) {
	on, err := side.remoteShared(ctx, e)
	if err != nil {
		return 0, err
	}
	reg, ri, err := side.remoteExecutor(ctx, e)
	if err != nil {
		return 0, err
	}
	off, err := openRemoteSessionOpts(ctx, reg.svc.URL, ri.env, reg.token, remoteSessionOpts{noARQ: true})
	if err != nil {
		return 0, fmt.Errorf("connecting without relay ARQ: %w%s", err, ri.output.suffix())
	}
	defer off.close()
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
		r, err := streamZeros(ctx, e, s, side.processID("relay-arq"), size)
		if err != nil {
			return 0, err
		}
		rates[s] = r
	}
	return rates[on] / rates[off], nil
}
