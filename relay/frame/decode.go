package frame

import (
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

// Decoding follows protobuf semantics as the reference's prost decoder applies them:
//
//   - a scalar field seen twice: the last value wins; uint32 keeps the low 32 bits of the varint;
//   - the same body member seen twice: the second is merged into the first; a different member
//     replaces it (oneof);
//   - 11 traceparent and 12 tracestate are known optional strings: checked (wire type, UTF-8);
//     traceparent is kept in Frame.Traceparent (last one wins), tracestate discarded, as the
//     released binary does (observed from codex 0.169.0: invalid UTF-8 in
//     field 11 is a decode error there);
//   - 100 relay_features (our extension) is read when it is a varint (last one wins, low 32
//     bits) and skipped like an unknown field otherwise: a released decoder skips it whatever
//     its type, and so a frame one of them accepts is never refused here for it;
//   - other unknown field numbers (13 and later) are skipped, whatever their wire type;
//   - a known field with the wrong wire type, a truncated field, field number 0 or invalid UTF-8
//     in a string field is an error.

// Decode parses one websocket message b into f, replacing all of f's fields. It does not run
// Validate. On error f is left in an unspecified state.
//
// The result aliases b: Data.Payload and Handshake.Payload point into it. When f.Body already
// holds a value of the decoded kind, Decode overwrites that value instead of allocating, and it
// keeps f.StreamID when the id bytes are unchanged; so decoding successive data frames of a stream
// into one Frame allocates nothing. Do not keep f.Body or payloads across Decode calls on the same
// Frame or beyond the life of b; Clone what must be kept.
func Decode(f *Frame, b []byte) error {
	if len(b) > MaxMessageSize {
		return fmt.Errorf("decoding relay frame of %d bytes: %w", len(b), ErrMessageTooLarge)
	}
	prev := f.Body
	f.Version, f.Ack, f.AckBits, f.Body, f.Traceparent, f.Features = 0, 0, 0, nil, "", 0
	sawID := false
	for len(b) > 0 {
		num, typ, n := consumeTag(b)
		if n < 0 {
			return malformed("reading field tag", protowire.ParseError(n))
		}
		b = b[n:]
		var err error
		switch num {
		case fieldVersion:
			f.Version, n, err = consumeUint32(b, typ, "version")
		case fieldStreamID:
			var v []byte
			v, n, err = consumeString(b, typ, "stream_id")
			if err == nil && f.StreamID != string(v) { // the comparison does not allocate
				f.StreamID = string(v)
			}
			sawID = true
		case fieldAck:
			f.Ack, n, err = consumeUint32(b, typ, "ack")
		case fieldAckBits:
			f.AckBits, n, err = consumeUint32(b, typ, "ack_bits")
		case fieldTraceparent:
			var v []byte
			v, n, err = consumeString(b, typ, "traceparent")
			if err == nil {
				f.Traceparent = string(v)
			}
		case fieldTracestate:
			_, n, err = consumeString(b, typ, "tracestate")
		case fieldFeatures:
			n, err = consumeFeatures(f, b, typ)
		case fieldData, fieldAckFrame, fieldResume, fieldReset, fieldHeartbeat, fieldHandshake:
			var msg []byte
			msg, n, err = consumeMessage(b, typ, num)
			if err == nil {
				err = decodeBody(f, prev, num, msg)
			}
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				err = malformed(fmt.Sprintf("skipping unknown field %d", num), protowire.ParseError(n))
			}
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	if !sawID {
		f.StreamID = ""
	}
	return nil
}

// decodeBody decodes the content of body member num into f.Body. A repeat of the member already
// in f.Body merges into it; otherwise the value from prev is reused when it has the same kind.
func decodeBody(f *Frame, prev Body, num protowire.Number, msg []byte) error {
	switch num {
	case fieldData:
		return decodeData(bodyOf[Data](f, prev), msg)
	case fieldAckFrame:
		f.Body = reuse(prev, f.Body, func() *Ack { return &Ack{} })
		return skipFields(msg, "ack_frame")
	case fieldResume:
		return decodeResume(bodyOf[Resume](f, prev), msg)
	case fieldReset:
		return decodeReset(bodyOf[Reset](f, prev), msg)
	case fieldHeartbeat:
		f.Body = reuse(prev, f.Body, func() *Heartbeat { return &Heartbeat{} })
		return skipFields(msg, "heartbeat")
	case fieldHandshake:
		return decodeHandshake(bodyOf[Handshake](f, prev), msg)
	}
	return nil
}

// bodyOf returns the *T that a member with fields decodes into, and makes it f.Body: f.Body
// itself when it already is one (a repeated member merges into it, as protobuf merges),
// else prev's when prev is one, else a new one; the last two are cleared first.
func bodyOf[T any, P interface {
	*T
	Body
}](f *Frame, prev Body) P {
	if v, merge := f.Body.(P); merge {
		return v
	}
	v, _ := prev.(P)
	if v == nil {
		v = new(T)
	}
	var zero T
	*v = zero
	f.Body = v
	return v
}

// reuse returns cur if it already has type T, else prev if it has type T, else a new T.
// Used for the field-less bodies.
func reuse[T Body](prev, cur Body, mk func() T) T {
	if v, ok := cur.(T); ok && !isNilBody(v) {
		return v
	}
	if v, ok := prev.(T); ok && !isNilBody(v) {
		return v
	}
	return mk()
}

func decodeData(d *Data, b []byte) error {
	for len(b) > 0 {
		num, typ, n := consumeTag(b)
		if n < 0 {
			return malformed("reading data field tag", protowire.ParseError(n))
		}
		b = b[n:]
		var err error
		switch num {
		case fieldDataSeq:
			d.Seq, n, err = consumeUint32(b, typ, "data.seq")
		case fieldDataSegmentIndex:
			d.SegmentIndex, n, err = consumeUint32(b, typ, "data.segment_index")
		case fieldDataSegmentCount:
			d.SegmentCount, n, err = consumeUint32(b, typ, "data.segment_count")
		case fieldDataPayload:
			d.Payload, n, err = consumeBytes(b, typ, "data.payload")
		default:
			n, err = skipField(b, num, typ, "data")
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func decodeResume(r *Resume, b []byte) error {
	for len(b) > 0 {
		num, typ, n := consumeTag(b)
		if n < 0 {
			return malformed("reading resume field tag", protowire.ParseError(n))
		}
		b = b[n:]
		var err error
		if num == fieldResumeNextSeq {
			r.NextSeq, n, err = consumeUint32(b, typ, "resume.next_seq")
		} else {
			n, err = skipField(b, num, typ, "resume")
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func decodeReset(r *Reset, b []byte) error {
	for len(b) > 0 {
		num, typ, n := consumeTag(b)
		if n < 0 {
			return malformed("reading reset field tag", protowire.ParseError(n))
		}
		b = b[n:]
		var err error
		if num == fieldResetReason {
			var v []byte
			v, n, err = consumeString(b, typ, "reset.reason")
			if err == nil && r.Reason != string(v) {
				r.Reason = string(v)
			}
		} else {
			n, err = skipField(b, num, typ, "reset")
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func decodeHandshake(h *Handshake, b []byte) error {
	for len(b) > 0 {
		num, typ, n := consumeTag(b)
		if n < 0 {
			return malformed("reading handshake field tag", protowire.ParseError(n))
		}
		b = b[n:]
		var err error
		if num == fieldHandshakePayload {
			h.Payload, n, err = consumeBytes(b, typ, "handshake.payload")
		} else {
			n, err = skipField(b, num, typ, "handshake")
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// skipFields checks that b is a well-formed sequence of fields and ignores them all.
func skipFields(b []byte, msg string) error {
	for len(b) > 0 {
		num, typ, n := consumeTag(b)
		if n < 0 {
			return malformed("reading "+msg+" field tag", protowire.ParseError(n))
		}
		b = b[n:]
		if n, err := skipField(b, num, typ, msg); err != nil {
			return err
		} else {
			b = b[n:]
		}
	}
	return nil
}

// consumeTag is protowire.ConsumeTag plus the upper bound on field numbers that prost and
// protobuf-go enforce (a key above u32::MAX is an error there).
func consumeTag(b []byte) (protowire.Number, protowire.Type, int) {
	num, typ, n := protowire.ConsumeTag(b)
	if n >= 0 && num > protowire.MaxValidNumber {
		return 0, 0, errCodeFieldNumber
	}
	return num, typ, n
}

// errCodeFieldNumber is the protowire.ParseError code for "invalid field number".
const errCodeFieldNumber = -2

func skipField(b []byte, num protowire.Number, typ protowire.Type, msg string) (int, error) {
	n := protowire.ConsumeFieldValue(num, typ, b)
	if n < 0 {
		return 0, malformed(fmt.Sprintf("skipping unknown %s field %d", msg, num), protowire.ParseError(n))
	}
	return n, nil
}

func consumeUint32(b []byte, typ protowire.Type, name string) (uint32, int, error) {
	if typ != protowire.VarintType {
		return 0, 0, malformedType(name, typ)
	}
	v, n := protowire.ConsumeVarint(b)
	if n < 0 {
		return 0, 0, malformed("reading "+name, protowire.ParseError(n))
	}
	return uint32(v), n, nil
}

func consumeBytes(b []byte, typ protowire.Type, name string) ([]byte, int, error) {
	if typ != protowire.BytesType {
		return nil, 0, malformedType(name, typ)
	}
	v, n := protowire.ConsumeBytes(b)
	if n < 0 {
		return nil, 0, malformed("reading "+name, protowire.ParseError(n))
	}
	return v, n, nil
}

func consumeString(b []byte, typ protowire.Type, name string) ([]byte, int, error) {
	v, n, err := consumeBytes(b, typ, name)
	if err == nil && !utf8.Valid(v) {
		return nil, 0, malformed("reading "+name, errInvalidUTF8)
	}
	return v, n, err
}

func consumeMessage(b []byte, typ protowire.Type, num protowire.Number) ([]byte, int, error) {
	name := Kind(num - fieldData + protowire.Number(KindData)).String()
	return consumeBytes(b, typ, name)
}

// consumeFeatures reads field 100 into f.Features when it is a varint and skips it (leaving
// f.Features as it was) when it has another wire type.
func consumeFeatures(f *Frame, b []byte, typ protowire.Type) (int, error) {
	if typ != protowire.VarintType {
		return skipField(b, fieldFeatures, typ, "relay_features")
	}
	v, n, err := consumeUint32(b, typ, "relay_features")
	if err == nil {
		f.Features = v
	}
	return n, err
}
