package initiator

import "context"

// Conn is the socket a Stream owns, one binary websocket message per frame;
// relay/wsconn.Conn implements it. It is defined here, by its consumer, so that the
// initiator links no websocket library. ReadFrame returns frame.ErrNonBinary for a text
// message; ReleaseFrame hands back a message ReadFrame returned once nothing refers to it;
// Keepalive pings until ctx ends or the peer stops answering (then the socket is dropped);
// Close drops the socket.
type Conn interface {
	Keepalive(ctx context.Context) error
	ReadFrame(ctx context.Context) ([]byte, error)
	ReleaseFrame(b []byte)
	WriteFrame(ctx context.Context, b []byte) error
	Close() error
}

// Packet is one relay record of a stream: a handshake message (Handshake) or a sealed
// transport record with its seq. It is the twin of noise/channel's Packet (the relay may
// not import noise), so the harness converts one into the other directly.
type Packet struct {
	Handshake bool
	Seq       uint32
	Payload   []byte
}
