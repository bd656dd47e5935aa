package frame

import "bytes"

// Frame is one decoded RelayMessageFrame.
//
//	field  name       wire            our field
//	1      version    varint          Version (must be 1)
//	2      stream_id  bytes (UTF-8)   StreamID
//	3      ack        varint          Ack (released peers: 0, ignored)
//	4      ack_bits   varint          AckBits (released peers: 0, ignored)
//	5..10  body       oneof message   Body (nil = no body on the wire)
//	11     traceparent string (UTF-8)  Traceparent: kept on decode; emitted only when non-empty
//	                                  (the harness's handshake frame with tracing on)
//	12     tracestate string (UTF-8)   not represented: checked and discarded, never emitted
//	100    relay_features varint      Features (our extension; released peers never send it and
//	                                  skip it): emitted only when non-zero
//
// A Frame filled by Decode aliases the decoded message; see Decode and Clone.
type Frame struct {
	Version  uint32
	StreamID string
	Ack      uint32
	AckBits  uint32
	// Body is the oneof member, or nil when none was present. Its dynamic type is one of
	// *Data, *Ack, *Resume, *Reset, *Heartbeat, *Handshake.
	Body Body
	// Traceparent is field 11, the cleartext W3C trace header later reference revisions
	// define: kept by Decode, encoded only when non-empty (never by default). Only the
	// harness's first handshake frame carries it, and only with tracing on.
	Traceparent string
	// Features is field 100, our extension: a bitmask of relay features (FeatureARQ) that
	// the sender supports. Only handshake frames between our harness and our executor carry
	// it; 0 (the default, never encoded) is a released peer's frame. Decode reads it when it
	// is a varint and skips it otherwise, as a released decoder would.
	Features uint32
}

// Body is the sealed set of RelayMessageFrame bodies. Only this package's pointer types
// implement it.
type Body interface {
	// Kind names the body for logs and metric labels; it never includes payload bytes.
	Kind() Kind
	isBody()
}

// Kind enumerates the body kinds, with zero meaning "no body".
type Kind uint8

// Body kinds, in field-number order.
const (
	KindNone Kind = iota
	KindData
	KindAck
	KindResume
	KindReset
	KindHeartbeat
	KindHandshake
)

var kindNames = [...]string{
	KindNone:      "none",
	KindData:      "data",
	KindAck:       "ack_frame",
	KindResume:    "resume",
	KindReset:     "reset",
	KindHeartbeat: "heartbeat",
	KindHandshake: "handshake",
}

// String returns the protobuf oneof member name ("data", "ack_frame", …), or "none".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// KindOf returns b's kind, KindNone for a nil interface or a nil pointer.
func KindOf(b Body) Kind {
	if isNilBody(b) {
		return KindNone
	}
	return b.Kind()
}

// Data is RelayData: one Noise transport record (field 5).
//
//	1 seq            varint  per stream and direction, from 0 (omitted when 0)
//	2 segment_index  varint  must be 0 (omitted)
//	3 segment_count  varint  must be 1 (always present)
//	4 payload        bytes   non-empty ciphertext
type Data struct {
	Seq          uint32
	SegmentIndex uint32
	SegmentCount uint32
	// Payload is the ciphertext. After Decode it aliases the decoded message.
	Payload []byte
}

// Ack is RelayAck (field 6): no fields; never sent by released peers and ignored on receipt.
type Ack struct{}

// Resume is RelayResume (field 7): the harness's first frame on a socket, encoded "3a 00" when
// NextSeq is 0. The executor ignores it.
type Resume struct {
	NextSeq uint32
}

// Reset is RelayReset (field 8): stream teardown. It is unauthenticated, so Reason must never
// be logged, propagated or trusted.
type Reset struct {
	Reason string
}

// Heartbeat is RelayHeartbeat (field 9): no fields; never sent (websocket Ping/Pong carries
// liveness) and ignored on receipt.
type Heartbeat struct{}

// Handshake is RelayHandshake (field 10): one Noise handshake message.
type Handshake struct {
	// Payload is the Noise message. After Decode it aliases the decoded message.
	Payload []byte
}

func (*Data) Kind() Kind      { return KindData }
func (*Ack) Kind() Kind       { return KindAck }
func (*Resume) Kind() Kind    { return KindResume }
func (*Reset) Kind() Kind     { return KindReset }
func (*Heartbeat) Kind() Kind { return KindHeartbeat }
func (*Handshake) Kind() Kind { return KindHandshake }

func (*Data) isBody()      {}
func (*Ack) isBody()       {}
func (*Resume) isBody()    {}
func (*Reset) isBody()     {}
func (*Heartbeat) isBody() {}
func (*Handshake) isBody() {}

// isNilBody reports whether b is a nil interface or holds a nil pointer.
func isNilBody(b Body) bool {
	switch v := b.(type) {
	case nil:
		return true
	case *Data:
		return v == nil
	case *Ack:
		return v == nil
	case *Resume:
		return v == nil
	case *Reset:
		return v == nil
	case *Heartbeat:
		return v == nil
	case *Handshake:
		return v == nil
	}
	return false
}

// Clone returns a deep copy of f that shares no memory with f or with the message f was
// decoded from.
func (f *Frame) Clone() Frame {
	c := *f
	switch b := f.Body.(type) {
	case *Data:
		if b != nil {
			d := *b
			d.Payload = bytes.Clone(b.Payload)
			c.Body = &d
		}
	case *Ack:
		if b != nil {
			c.Body = &Ack{}
		}
	case *Resume:
		if b != nil {
			r := *b
			c.Body = &r
		}
	case *Reset:
		if b != nil {
			r := *b
			c.Body = &r
		}
	case *Heartbeat:
		if b != nil {
			c.Body = &Heartbeat{}
		}
	case *Handshake:
		if b != nil {
			c.Body = &Handshake{Payload: bytes.Clone(b.Payload)}
		}
	}
	return c
}
