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

// PacketReleaser is an optional extension of RecordConn whose packets' storage can be
// reused. The channel calls ReleasePacket with a record's Payload, as the latest ReadPacket
// returned it, once nothing refers to it any more: the record was decrypted in place and
// its plaintext copied into a message spanning records, not handed out as a message. It is
// called on the goroutine of that ReadPacket, before the next one; records that waited in
// the reorder buffer, handshake packets and records a returned message aliases are never
// released.
type PacketReleaser interface {
	ReleasePacket(payload []byte)
}
