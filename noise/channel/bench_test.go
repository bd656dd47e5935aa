package channel_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/execlab/executor/noise/channel"
)

// BenchmarkConn_Message moves one message per iteration from a Responder Conn to an
// Initiator Conn over the in-memory pipe: framing, encryption, reorder, decryption,
// reassembly.
func BenchmarkConn_Message(b *testing.B) {
	for _, n := range []int{256, 61436, 1 << 20} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			p := runPairB(b)
			ctx := context.Background()
			msg := pattern(n, 1)
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				errc := make(chan error, 1)
				go func() { errc <- p.w.WriteMessage(ctx, msg) }()
				if _, err := p.r.ReadMessage(ctx); err != nil {
					b.Fatal(err)
				}
				if err := <-errc; err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type benchPair struct{ w, r *channel.Conn }

func runPairB(b *testing.B) benchPair {
	respID, initID := mustIdentity(b), mustIdentity(b)
	a, z := newPipe(1024)
	ctx := testCtx(b)
	res := make(chan connResult, 1)
	go func() {
		c, err := channel.Responder(ctx, z, &channel.ResponderConfig{Static: respID, Authorize: allowAll})
		res <- connResult{c, err}
	}()
	ic, err := channel.Initiator(ctx, a, &channel.InitiatorConfig{Static: initID, ResponderStatic: respID.Public()})
	if err != nil {
		b.Fatal(err)
	}
	r := <-res
	if r.err != nil {
		b.Fatal(r.err)
	}
	b.Cleanup(func() { ic.Close(); r.conn.Close() })
	return benchPair{w: r.conn, r: ic}
}
