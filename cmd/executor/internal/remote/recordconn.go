package remote

import (
	"context"

	"github.com/execlab/executor/noise/channel"
	"github.com/execlab/executor/relay/mux"
)

// recordConn adapts a mux.Stream to channel.RecordConn (the relay may not import noise, so
// the two Packet types are twins and convert directly).
type recordConn struct{ s *mux.Stream }

func (r recordConn) ReadPacket(ctx context.Context) (channel.Packet, error) {
	p, err := r.s.ReadPacket(ctx)
	return channel.Packet(p), err
}

func (r recordConn) WritePacket(ctx context.Context, p channel.Packet) error {
	return r.s.WritePacket(ctx, mux.Packet(p))
}

func (r recordConn) Close() error { return r.s.Close() }
