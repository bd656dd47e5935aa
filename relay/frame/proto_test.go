package frame_test

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/execlab/executor/proto/relayv1"
	"github.com/execlab/executor/relay/frame"
)

// toProto converts our frame into the generated struct (test-only cross-check).
func toProto(f *frame.Frame) *relayv1.RelayMessageFrame {
	m := &relayv1.RelayMessageFrame{Version: f.Version, StreamId: f.StreamID, Ack: f.Ack, AckBits: f.AckBits}
	switch b := f.Body.(type) {
	case *frame.Data:
		m.Body = &relayv1.RelayMessageFrame_Data{Data: &relayv1.RelayData{
			Seq: b.Seq, SegmentIndex: b.SegmentIndex, SegmentCount: b.SegmentCount, Payload: b.Payload,
		}}
	case *frame.Ack:
		m.Body = &relayv1.RelayMessageFrame_AckFrame{AckFrame: &relayv1.RelayAck{}}
	case *frame.Resume:
		m.Body = &relayv1.RelayMessageFrame_Resume{Resume: &relayv1.RelayResume{NextSeq: b.NextSeq}}
	case *frame.Reset:
		m.Body = &relayv1.RelayMessageFrame_Reset_{Reset_: &relayv1.RelayReset{Reason: b.Reason}}
	case *frame.Heartbeat:
		m.Body = &relayv1.RelayMessageFrame_Heartbeat{Heartbeat: &relayv1.RelayHeartbeat{}}
	case *frame.Handshake:
		m.Body = &relayv1.RelayMessageFrame_Handshake{Handshake: &relayv1.RelayHandshake{Payload: b.Payload}}
	}
	if f.Features != 0 { // our extension: an unknown field to the reference schema
		raw := protowire.AppendTag(nil, 100, protowire.VarintType)
		m.ProtoReflect().SetUnknown(protowire.AppendVarint(raw, uint64(f.Features)))
	}
	return m
}

// featuresOf reads our field 100 out of the unknown fields protobuf-go kept, as Decode does:
// varints only, the last one wins.
func featuresOf(m *relayv1.RelayMessageFrame) uint32 {
	var v uint32
	b := m.ProtoReflect().GetUnknown()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return v
		}
		b = b[n:]
		if num == 100 && typ == protowire.VarintType {
			x, _ := protowire.ConsumeVarint(b)
			v = uint32(x)
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return v
		}
		b = b[n:]
	}
	return v
}

// fromProto converts the generated struct into our frame.
func fromProto(m *relayv1.RelayMessageFrame) frame.Frame {
	f := frame.Frame{Version: m.GetVersion(), StreamID: m.GetStreamId(), Ack: m.GetAck(), AckBits: m.GetAckBits(),
		Features: featuresOf(m), Traceparent: m.GetTraceparent()}
	switch b := m.GetBody().(type) {
	case *relayv1.RelayMessageFrame_Data:
		d := b.Data
		f.Body = &frame.Data{Seq: d.GetSeq(), SegmentIndex: d.GetSegmentIndex(), SegmentCount: d.GetSegmentCount(), Payload: d.GetPayload()}
	case *relayv1.RelayMessageFrame_AckFrame:
		f.Body = &frame.Ack{}
	case *relayv1.RelayMessageFrame_Resume:
		f.Body = &frame.Resume{NextSeq: b.Resume.GetNextSeq()}
	case *relayv1.RelayMessageFrame_Reset_:
		f.Body = &frame.Reset{Reason: b.Reset_.GetReason()}
	case *relayv1.RelayMessageFrame_Heartbeat:
		f.Body = &frame.Heartbeat{}
	case *relayv1.RelayMessageFrame_Handshake:
		f.Body = &frame.Handshake{Payload: b.Handshake.GetPayload()}
	}
	return f
}

func allBodiesFrames() []frame.Frame {
	return []frame.Frame{
		{Version: 1, StreamID: "s-1", Body: &frame.Data{SegmentCount: 1, Payload: []byte("x")}},
		{Version: 1, StreamID: "3f0c1e9a-0d5b-4b1e-8a57-6c2f0e4d9b11", Ack: 7, AckBits: 0xffffffff,
			Body: &frame.Data{Seq: 1<<32 - 1, SegmentCount: 1, Payload: bytes.Repeat([]byte{0xee}, 61456)}},
		{Version: 1, StreamID: "s", Body: &frame.Ack{}},
		{Version: 1, StreamID: "s", Body: &frame.Resume{}},
		{Version: 1, StreamID: "s", Body: &frame.Resume{NextSeq: 300}},
		{Version: 1, StreamID: "s", Body: &frame.Reset{Reason: frame.ResetReasonProtocolError}},
		{Version: 1, StreamID: "s", Body: &frame.Heartbeat{}},
		{Version: 1, StreamID: "s", Body: &frame.Handshake{Payload: bytes.Repeat([]byte{1}, 3424)}},
	}
}

// TestEncode_MatchesGeneratedCode is proto_roundtrip_all_bodies: our encoder produces what
// google.golang.org/protobuf produces from the generated structs, and each side decodes the
// other's bytes to the same frame.
func TestEncode_MatchesGeneratedCode(t *testing.T) {
	for _, f := range allBodiesFrames() {
		t.Run(frame.KindOf(f.Body).String(), func(t *testing.T) {
			ours, err := frame.Encode(nil, &f)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			theirs, err := proto.MarshalOptions{Deterministic: true}.Marshal(toProto(&f))
			if err != nil {
				t.Fatalf("proto.Marshal: %v", err)
			}
			if !bytes.Equal(ours, theirs) {
				t.Fatalf("Encode: got %x, want (protobuf-go) %x", head(ours), head(theirs))
			}
			var m relayv1.RelayMessageFrame
			if err := proto.Unmarshal(ours, &m); err != nil {
				t.Fatalf("proto.Unmarshal of our bytes: %v", err)
			}
			if got := fromProto(&m); !equalFrames(&got, &f) {
				t.Errorf("protobuf-go decoded our bytes as %+v, want %+v", got, f)
			}
			var got frame.Frame
			if err := frame.Decode(&got, theirs); err != nil {
				t.Fatalf("Decode of protobuf-go bytes: %v", err)
			}
			if !equalFrames(&got, &f) {
				t.Errorf("Decode: got %+v, want %+v", got, f)
			}
		})
	}
}

func head(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// TestDecode_SkipsTraceFields: field 11 (traceparent) is kept, 12 (tracestate) and unknown
// later fields are skipped, including inside bodies.
func TestDecode_SkipsTraceFields(t *testing.T) {
	tp, ts := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "congo=t61rcWkgMzE"
	m := &relayv1.RelayMessageFrame{
		Version: 1, StreamId: "s-1",
		Body:        &relayv1.RelayMessageFrame_Resume{Resume: &relayv1.RelayResume{}},
		Traceparent: &tp, Tracestate: &ts,
	}
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	// Unknown fields of every wire type, at the top level.
	b = protowire.AppendTag(b, 13, protowire.VarintType)
	b = protowire.AppendVarint(b, 1<<40)
	b = protowire.AppendTag(b, 14, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, 5)
	b = protowire.AppendTag(b, 15, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, 5)
	b = protowire.AppendTag(b, 16, protowire.StartGroupType)
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	b = protowire.AppendTag(b, 16, protowire.EndGroupType)
	var f frame.Frame
	if err := frame.Decode(&f, b); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	want := frame.Frame{Version: 1, StreamID: "s-1", Body: &frame.Resume{}, Traceparent: tp}
	if !equalFrames(&f, &want) {
		t.Errorf("got %+v, want %+v", f, want)
	}
	if err := f.Validate(); err != nil {
		t.Errorf("Validate: got %v, want nil", err)
	}

	// Unknown field inside a data body.
	body := protowire.AppendTag(nil, 1, protowire.VarintType)
	body = protowire.AppendVarint(body, 9)
	body = protowire.AppendTag(body, 7, protowire.BytesType)
	body = protowire.AppendBytes(body, []byte("future"))
	body = protowire.AppendTag(body, 3, protowire.VarintType)
	body = protowire.AppendVarint(body, 1)
	body = protowire.AppendTag(body, 4, protowire.BytesType)
	body = protowire.AppendBytes(body, []byte{1})
	msg := mustHex(t, "08 01 12 01 73")
	msg = protowire.AppendTag(msg, 5, protowire.BytesType)
	msg = protowire.AppendBytes(msg, body)
	if err := frame.Decode(&f, msg); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	wantData := frame.Frame{Version: 1, StreamID: "s", Body: &frame.Data{Seq: 9, SegmentCount: 1, Payload: []byte{1}}}
	if !equalFrames(&f, &wantData) {
		t.Errorf("got %+v %+v, want %+v", f, f.Body, wantData)
	}
}

// TestDecode_ProtobufSemantics: repeated scalars keep the last value, a repeated body member
// merges, a different member replaces, and uint32 keeps the low bits — as protobuf-go does.
func TestDecode_ProtobufSemantics(t *testing.T) {
	tests := []struct {
		name string
		hex  string
		want frame.Frame
	}{
		{"last version wins", "08 02 08 01 12 01 73 3a 00", frame.Frame{Version: 1, StreamID: "s", Body: &frame.Resume{}}},
		{"last stream_id wins", "08 01 12 01 61 12 01 62 3a 00", frame.Frame{Version: 1, StreamID: "b", Body: &frame.Resume{}}},
		{"data merges", "08 01 12 01 73 2a 02 08 05 2a 04 18 01 22 00 2a 03 22 01 ff",
			frame.Frame{Version: 1, StreamID: "s", Body: &frame.Data{Seq: 5, SegmentCount: 1, Payload: []byte{0xff}}}},
		{"other member replaces", "08 01 12 01 73 2a 02 08 05 3a 00", frame.Frame{Version: 1, StreamID: "s", Body: &frame.Resume{}}},
		{"replaced then again", "08 01 12 01 73 2a 02 08 05 3a 00 2a 02 18 01",
			frame.Frame{Version: 1, StreamID: "s", Body: &frame.Data{SegmentCount: 1}}},
		{"uint32 truncates", "08 81 80 80 80 10 12 01 73 3a 00", frame.Frame{Version: 1, StreamID: "s", Body: &frame.Resume{}}},
		{"no body", "08 01 12 01 73", frame.Frame{Version: 1, StreamID: "s"}},
		{"empty message", "", frame.Frame{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustHex(t, tt.hex)
			var f frame.Frame
			if err := frame.Decode(&f, b); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !equalFrames(&f, &tt.want) {
				t.Errorf("got %+v %+v, want %+v %+v", f, f.Body, tt.want, tt.want.Body)
			}
			var m relayv1.RelayMessageFrame
			if err := proto.Unmarshal(b, &m); err != nil {
				t.Fatalf("proto.Unmarshal: %v", err)
			}
			if pf := fromProto(&m); !equalFrames(&pf, &tt.want) {
				t.Errorf("protobuf-go disagrees with the test: %+v %+v", pf, pf.Body)
			}
		})
	}
}

// TestEncode_Traceparent: a Traceparent is encoded as field 11, which the generated
// reference message reads back, after the body; an empty one encodes nothing (the default
// bytes), and Decode resets it.
func TestEncode_Traceparent(t *testing.T) {
	tp := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	f := frame.Frame{Version: 1, StreamID: "s-1", Body: &frame.Handshake{Payload: []byte{1, 2}}, Traceparent: tp}
	b, err := frame.Encode(nil, &f)
	if err != nil {
		t.Fatal(err)
	}
	var m relayv1.RelayMessageFrame
	if err := proto.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.GetTraceparent() != tp || string(m.GetHandshake().GetPayload()) != "\x01\x02" {
		t.Errorf("reference message: traceparent %q handshake %x", m.GetTraceparent(), m.GetHandshake().GetPayload())
	}
	f.Traceparent = ""
	plain, err := frame.Encode(nil, &f)
	if err != nil {
		t.Fatal(err)
	}
	if want := b[:len(plain)]; string(plain) != string(want) {
		t.Errorf("without traceparent %x, want the traced encoding's prefix %x", plain, want)
	}
	var g frame.Frame
	if err := frame.Decode(&g, b); err != nil || g.Traceparent != tp {
		t.Fatalf("Decode: %q, %v", g.Traceparent, err)
	}
	if err := frame.Decode(&g, plain); err != nil || g.Traceparent != "" {
		t.Errorf("Decode without field 11 kept %q (%v)", g.Traceparent, err)
	}
}

// TestFeatures: field 100 (our relay_features extension) is encoded after everything else
// only when non-zero, so a frame without features is byte-identical to the reference's; the
// reference schema (protobuf-go with the generated structs, like a released prost decoder)
// accepts the frame and skips the field; Decode reads a varint and skips other wire types.
func TestFeatures(t *testing.T) {
	f := frame.Frame{Version: 1, StreamID: "s-1", Body: &frame.Handshake{Payload: []byte{1, 2}}, Features: frame.FeatureARQ}
	b, err := frame.Encode(nil, &f)
	if err != nil {
		t.Fatal(err)
	}
	plainFrame := f
	plainFrame.Features = 0
	plain, err := frame.Encode(nil, &plainFrame)
	if err != nil {
		t.Fatal(err)
	}
	if want := append(bytes.Clone(plain), 0xa0, 0x06, 0x01); !bytes.Equal(b, want) {
		t.Fatalf("encoding: got % x, want % x", b, want)
	}
	var m relayv1.RelayMessageFrame
	if err := proto.Unmarshal(b, &m); err != nil {
		t.Fatalf("reference schema refused the frame: %v", err)
	}
	if string(m.GetHandshake().GetPayload()) != "\x01\x02" || m.GetStreamId() != "s-1" {
		t.Errorf("reference schema read %v", &m)
	}
	var g frame.Frame
	if err := frame.Decode(&g, b); err != nil || !equalFrames(&g, &f) {
		t.Fatalf("Decode: %+v, %v", g, err)
	}
	// Other wire types are skipped, as a released decoder skips any field 100.
	for _, tail := range [][]byte{{0xa2, 0x06, 0x01, 0x07}, {0xa5, 0x06, 1, 2, 3, 4}} {
		in := append(bytes.Clone(plain), tail...)
		if err := frame.Decode(&g, in); err != nil || g.Features != 0 {
			t.Errorf("Decode of % x: features %d, %v", tail, g.Features, err)
		}
		if err := proto.Unmarshal(in, &m); err != nil {
			t.Errorf("reference schema refused % x: %v", tail, err)
		}
	}
}
