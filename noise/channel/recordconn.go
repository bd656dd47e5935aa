package channel

import "context"

// Packet is one relay payload of a stream: a handshake message or a transport record.
// Seq is meaningful only for records (Handshake false).
type Packet struct {
	Handshake bool
	Seq       uint32
	Payload   []byte
}

// RecordConn carries the packets of one relay stream. Records may arrive out of order
// or duplicated; the channel reorders and deduplicates them.
//
// ReadPacket is called by one goroutine at a time and transfers ownership of the
// returned Payload to the channel, which decrypts it in place. WritePacket is called by one goroutine at a time,
// possibly concurrently with ReadPacket; the channel never touches p.Payload after it
// returns, so it may be queued. Both must return promptly once ctx is done. If the
// RecordConn also implements io.Closer, Conn.Close closes it.
type RecordConn interface {
	ReadPacket(ctx context.Context) (Packet, error)
	WritePacket(ctx context.Context, p Packet) error
}
