package frame

import (
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// Encoding follows the reference's prost output byte for byte (spec/relay-noise.md §2.2):
//
//	08 <version>  12 <len> <stream_id>  [18 <ack>]  [20 <ack_bits>]  <body tag> <len> <body>
//	[5a <len> <traceparent>]  [a0 06 <features>]
//
// Fields appear in ascending number order; zero scalars and empty strings/bytes are omitted
// as proto3 does; the body is always written, an empty one as tag + 00 (resume{next_seq:0}
// is "3a 00"). Example, reset of stream "s-1" (37 bytes):
//
//	08 01 12 03 73 2d 31 42 1c 0a 1a 6e 6f 69 73 65 5f 72 65 6c 61 79 5f 70 72 6f 74 6f 63 6f 6c 5f 65 72 72 6f 72

var errNilBody = errors.New("relay: frame body is a nil pointer")

// Encode validates f (see Validate) and appends its protobuf encoding to dst. On error dst is
// returned unchanged. It grows dst at most once and allocates nothing else.
func Encode(dst []byte, f *Frame) ([]byte, error) {
	if err := f.Validate(); err != nil {
		return dst, fmt.Errorf("encoding relay frame: %w", err)
	}
	return EncodeUnvalidated(dst, f)
}

// EncodeUnvalidated appends f's protobuf encoding to dst without running Validate, so tests
// can put invalid frames on the wire. A nil Body encodes a frame without a body. It still
// fails on a nil body pointer and on an encoding longer than MaxMessageSize.
func EncodeUnvalidated(dst []byte, f *Frame) ([]byte, error) {
	return encode(dst, f, false)
}

// encode appends f's encoding; with omitPayload it stops before the bytes of the Data or
// Handshake payload (their tag and length are written), for EncodeSplit.
func encode(dst []byte, f *Frame, omitPayload bool) ([]byte, error) {
	bodyNum, bodyLen, err := bodySize(f.Body)
	if err != nil {
		return dst, err
	}
	n := sizeUint32(fieldVersion, f.Version) +
		sizeBytes(fieldStreamID, len(f.StreamID)) +
		sizeUint32(fieldAck, f.Ack) +
		sizeUint32(fieldAckBits, f.AckBits)
	if bodyNum != 0 {
		n += protowire.SizeTag(bodyNum) + protowire.SizeBytes(bodyLen)
	}
	if f.Traceparent != "" {
		n += sizeBytes(fieldTraceparent, len(f.Traceparent))
	}
	n += sizeUint32(fieldFeatures, f.Features)
	if n > MaxMessageSize {
		return dst, fmt.Errorf("encoding relay frame of %d bytes: %w", n, ErrMessageTooLarge)
	}
	if omitPayload {
		n -= trailingPayloadLen(f.Body)
	}
	dst = slices.Grow(dst, n)
	dst = appendUint32(dst, fieldVersion, f.Version)
	if f.StreamID != "" {
		dst = protowire.AppendTag(dst, fieldStreamID, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(len(f.StreamID)))
		dst = append(dst, f.StreamID...)
	}
	dst = appendUint32(dst, fieldAck, f.Ack)
	dst = appendUint32(dst, fieldAckBits, f.AckBits)
	if bodyNum != 0 {
		dst = appendBody(dst, f.Body, bodyNum, bodyLen, omitPayload)
	}
	if f.Traceparent != "" {
		dst = protowire.AppendTag(dst, fieldTraceparent, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(len(f.Traceparent)))
		dst = append(dst, f.Traceparent...)
	}
	dst = appendUint32(dst, fieldFeatures, f.Features)
	return dst, nil
}

// appendBody appends the body member: tag, length (bodyLen) and content.
func appendBody(dst []byte, body Body, bodyNum protowire.Number, bodyLen int, omitPayload bool) []byte {
	dst = protowire.AppendTag(dst, bodyNum, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(bodyLen))
	switch b := body.(type) {
	case *Data:
		dst = appendUint32(dst, fieldDataSeq, b.Seq)
		dst = appendUint32(dst, fieldDataSegmentIndex, b.SegmentIndex)
		dst = appendUint32(dst, fieldDataSegmentCount, b.SegmentCount)
		dst = appendBytes(dst, fieldDataPayload, b.Payload, omitPayload)
	case *Resume:
		dst = appendUint32(dst, fieldResumeNextSeq, b.NextSeq)
	case *Reset:
		if b.Reason != "" {
			dst = protowire.AppendTag(dst, fieldResetReason, protowire.BytesType)
			dst = protowire.AppendVarint(dst, uint64(len(b.Reason)))
			dst = append(dst, b.Reason...)
		}
	case *Handshake:
		dst = appendBytes(dst, fieldHandshakePayload, b.Payload, omitPayload)
	case *Ack, *Heartbeat:
		// No fields: tag + 00 already written.
	}
	return dst
}

// bodySize returns the body's field number (0 for no body) and the length of its content.
func bodySize(b Body) (protowire.Number, int, error) {
	if b == nil {
		return 0, 0, nil
	}
	if isNilBody(b) {
		return 0, 0, errNilBody
	}
	switch b := b.(type) {
	case *Data:
		return fieldData, sizeUint32(fieldDataSeq, b.Seq) +
			sizeUint32(fieldDataSegmentIndex, b.SegmentIndex) +
			sizeUint32(fieldDataSegmentCount, b.SegmentCount) +
			sizeBytes(fieldDataPayload, len(b.Payload)), nil
	case *Ack:
		return fieldAckFrame, 0, nil
	case *Resume:
		return fieldResume, sizeUint32(fieldResumeNextSeq, b.NextSeq), nil
	case *Reset:
		return fieldReset, sizeBytes(fieldResetReason, len(b.Reason)), nil
	case *Heartbeat:
		return fieldHeartbeat, 0, nil
	case *Handshake:
		return fieldHandshake, sizeBytes(fieldHandshakePayload, len(b.Payload)), nil
	default:
		// Unreachable while Body is sealed.
		return 0, 0, fmt.Errorf("relay: unknown frame body %T", b)
	}
}

// trailingPayloadLen is the length of the Data or Handshake payload, which encode omits
// with omitPayload (0 for other bodies).
func trailingPayloadLen(b Body) int {
	switch b := b.(type) {
	case *Data:
		return len(b.Payload)
	case *Handshake:
		return len(b.Payload)
	}
	return 0
}

// sizeUint32 is the encoded size of a proto3 uint32 field: 0 when v is 0.
func sizeUint32(num protowire.Number, v uint32) int {
	if v == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeVarint(uint64(v))
}

// sizeBytes is the encoded size of a proto3 string/bytes field of n bytes: 0 when n is 0.
func sizeBytes(num protowire.Number, n int) int {
	if n == 0 {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeBytes(n)
}

func appendUint32(dst []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return dst
	}
	dst = protowire.AppendTag(dst, num, protowire.VarintType)
	return protowire.AppendVarint(dst, uint64(v))
}

// appendBytes appends a bytes field; with omitLast only its tag and length (EncodeSplit
// sends the bytes themselves from v).
func appendBytes(dst []byte, num protowire.Number, v []byte, omitLast bool) []byte {
	if len(v) == 0 {
		return dst
	}
	dst = protowire.AppendTag(dst, num, protowire.BytesType)
	if omitLast {
		return protowire.AppendVarint(dst, uint64(len(v)))
	}
	return protowire.AppendBytes(dst, v)
}

// EncodeSplit is Encode for writers that send a frame as two parts without joining them
// (issue 16: relay/wsconn masks both into its write buffer, so a record payload is copied
// once on its way to the socket instead of three times). It validates f and appends to dst
// the encoding of f up to its trailing payload, and returns that head and the payload,
// which follows it on the wire: head ‖ tail is exactly what Encode(dst, f) returns. The tail
// is the Data or Handshake payload (aliased, not copied) when it is the last thing encoded;
// otherwise (no payload, a traceparent or features after it) tail is nil and head is the
// whole frame. On error dst is returned unchanged and tail is nil. It allocates only when
// dst must grow.
func EncodeSplit(dst []byte, f *Frame) (head, tail []byte, err error) {
	if err := f.Validate(); err != nil {
		return dst, nil, fmt.Errorf("encoding relay frame: %w", err)
	}
	var payload []byte
	switch b := f.Body.(type) {
	case *Data:
		payload = b.Payload
	case *Handshake:
		payload = b.Payload
	}
	if len(payload) == 0 || f.Traceparent != "" || f.Features != 0 {
		head, err = encode(dst, f, false)
		return head, nil, err
	}
	head, err = encode(dst, f, true)
	if err != nil {
		return dst, nil, err
	}
	return head, payload, nil
}
