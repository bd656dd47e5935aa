package frame_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/execlab/executor/relay/frame"
)

// TestDecode_RejectsMalformed covers check 0 of spec §3: each input fails with ErrMalformed
// and a message that starts with the reference's prefix and never echoes frame bytes.
func TestDecode_RejectsMalformed(t *testing.T) {
	tests := []struct {
		name string
		hex  string
	}{
		{"truncated tag", "80"},
		{"field number 0", "00 01"},
		{"truncated varint", "08 ff"},
		{"varint overflow", "08 ff ff ff ff ff ff ff ff ff ff 01"},
		{"truncated stream_id", "08 01 12 05 73"},
		{"stream_id wrong wire type", "08 01 10 05"},
		{"version wrong wire type", "0a 00"},
		{"stream_id invalid UTF-8", "08 01 12 01 ff 3a 00"},
		{"body wrong wire type", "08 01 12 01 73 38 00"},
		{"truncated body", "08 01 12 01 73 2a 05 08 01"},
		{"data seq wrong wire type", "08 01 12 01 73 2a 02 0a 00"},
		{"data payload wrong wire type", "08 01 12 01 73 2a 02 20 01"},
		{"data truncated payload", "08 01 12 01 73 2a 02 22 05"},
		{"reset invalid UTF-8", "08 01 12 01 73 42 03 0a 01 c3"},
		{"handshake truncated inner tag", "08 01 12 01 73 52 01 80"},
		{"resume next_seq wrong wire type", "08 01 12 01 73 3a 02 0a 00"},
		{"ack_frame garbage", "08 01 12 01 73 32 01 ff"},
		{"heartbeat garbage", "08 01 12 01 73 4a 02 0a 05"},
		{"unknown field truncated", "08 01 12 01 73 5a 05 00"},
		{"stray end group", "08 01 0c"},
		{"traceparent invalid UTF-8", "08 01 12 01 73 3a 00 5a 01 ff"},
		{"tracestate wrong wire type", "08 01 12 01 73 3a 00 60 01"},
		{"unterminated group", "08 01 0b 08 01"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f frame.Frame
			err := frame.Decode(&f, mustHex(t, tt.hex))
			if !errors.Is(err, frame.ErrMalformed) {
				t.Fatalf("got %v, want ErrMalformed", err)
			}
			if !strings.HasPrefix(err.Error(), "invalid relay message frame: ") {
				t.Errorf("got message %q, want prefix %q", err, "invalid relay message frame: ")
			}
		})
	}
}

// TestDecode_SizeLimit: exactly MaxMessageSize decodes, one more byte is refused before parsing.
func TestDecode_SizeLimit(t *testing.T) {
	payloadLen := frame.MaxMessageSize - 20
	f := frame.Frame{Version: 1, StreamID: "s", Body: &frame.Handshake{Payload: make([]byte, payloadLen)}}
	b, err := frame.Encode(nil, &f)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	// Pad with an unknown bytes field so the message is exactly MaxMessageSize.
	for len(b) < frame.MaxMessageSize {
		f.Body.(*frame.Handshake).Payload = make([]byte, payloadLen+frame.MaxMessageSize-len(b))
		payloadLen = len(f.Body.(*frame.Handshake).Payload)
		if b, err = frame.Encode(nil, &f); err != nil {
			t.Fatalf("Encode at %d: %v", payloadLen, err)
		}
	}
	if len(b) != frame.MaxMessageSize {
		t.Fatalf("got %d-byte frame, want %d", len(b), frame.MaxMessageSize)
	}
	var got frame.Frame
	if err := frame.Decode(&got, b); err != nil {
		t.Fatalf("Decode of %d bytes: got %v, want nil", len(b), err)
	}
	if err := frame.Decode(&got, append(b, 0)); !errors.Is(err, frame.ErrMessageTooLarge) {
		t.Errorf("Decode of %d bytes: got %v, want ErrMessageTooLarge", len(b)+1, err)
	}
	f.Body.(*frame.Handshake).Payload = make([]byte, payloadLen+1)
	out := []byte("keep")
	out2, err := frame.Encode(out, &f)
	if !errors.Is(err, frame.ErrMessageTooLarge) {
		t.Errorf("Encode of %d bytes: got %v, want ErrMessageTooLarge", len(b)+1, err)
	}
	if string(out2) != "keep" {
		t.Errorf("Encode on error: got dst %q, want it unchanged", out2)
	}
}

// TestDecode_ReusesFrame: decoding into a used Frame replaces every field, including a previous
// body of another kind and a previous stream id.
func TestDecode_ReusesFrame(t *testing.T) {
	seq := []frame.Frame{
		{Version: 1, StreamID: "a", Ack: 3, AckBits: 4, Body: &frame.Data{Seq: 2, SegmentCount: 1, Payload: []byte{1}}},
		{Version: 1, StreamID: "a", Body: &frame.Data{SegmentCount: 1, Payload: []byte{2, 3}}},
		{Version: 1, StreamID: "b", Body: &frame.Reset{Reason: "r"}},
		{Version: 2, Body: &frame.Reset{Reason: "q"}},
		{Version: 1, StreamID: "c", Body: &frame.Handshake{Payload: []byte{9}}},
		{Version: 1, StreamID: "c"},
		{Version: 1, StreamID: "c", Body: &frame.Resume{NextSeq: 1}},
		{Version: 1, StreamID: "c", Body: &frame.Resume{}},
		{Version: 1, StreamID: "d", Body: &frame.Ack{}},
		{Version: 1, StreamID: "d", Body: &frame.Heartbeat{}},
	}
	var f frame.Frame
	for i, want := range seq {
		b, err := frame.EncodeUnvalidated(nil, &want)
		if err != nil {
			t.Fatalf("step %d: Encode: %v", i, err)
		}
		if err := frame.Decode(&f, b); err != nil {
			t.Fatalf("step %d: Decode: %v", i, err)
		}
		if !equalFrames(&f, &want) {
			t.Errorf("step %d: got %+v %+v, want %+v %+v", i, f, f.Body, want, want.Body)
		}
	}
}

// TestClone_Detaches: a clone survives mutation of the decoded buffer and further Decodes.
func TestClone_Detaches(t *testing.T) {
	for _, orig := range allBodiesFrames() {
		t.Run(frame.KindOf(orig.Body).String(), func(t *testing.T) {
			b, err := frame.Encode(nil, &orig)
			if err != nil {
				t.Fatal(err)
			}
			var f frame.Frame
			if err := frame.Decode(&f, b); err != nil {
				t.Fatal(err)
			}
			c := f.Clone()
			for i := range b {
				b[i] = 0xff
			}
			other := frame.Frame{Version: 1, StreamID: "z", Body: orig.Body}
			ob, _ := frame.Encode(nil, &other)
			if err := frame.Decode(&f, ob); err != nil {
				t.Fatal(err)
			}
			if !equalFrames(&c, &orig) {
				t.Errorf("clone changed: got %+v, want %+v", c, orig)
			}
		})
	}
}

// TestEncode_AppendsToDst: Encode appends and leaves the existing prefix alone.
func TestEncode_AppendsToDst(t *testing.T) {
	f := frame.Frame{Version: 1, StreamID: "s-1", Body: &frame.Resume{}}
	got, err := frame.Encode([]byte("prefix"), &f)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]byte("prefix"), mustHex(t, "08 01 12 03 732d31 3a 00")...)
	if !bytes.Equal(got, want) {
		t.Errorf("got %x, want %x", got, want)
	}
}

// TestEncode_RejectsInvalid: Encode refuses what Validate refuses; EncodeUnvalidated writes it.
func TestEncode_RejectsInvalid(t *testing.T) {
	f := frame.Frame{Version: 1, StreamID: "s", Body: &frame.Data{Payload: []byte{1}}} // segment_count 0
	if _, err := frame.Encode(nil, &f); !errors.Is(err, frame.ErrDataMissingFields) {
		t.Errorf("Encode: got %v, want ErrDataMissingFields", err)
	}
	b, err := frame.EncodeUnvalidated(nil, &f)
	if err != nil {
		t.Fatalf("EncodeUnvalidated: %v", err)
	}
	if want := mustHex(t, "08 01 12 01 73 2a 03 22 01 01"); !bytes.Equal(b, want) {
		t.Errorf("EncodeUnvalidated: got %x, want %x", b, want)
	}
	nilBody := frame.Frame{Version: 1, StreamID: "s", Body: (*frame.Data)(nil)}
	if _, err := frame.EncodeUnvalidated(nil, &nilBody); err == nil {
		t.Errorf("EncodeUnvalidated of a nil *Data: got nil error, want one")
	}
	noBody := frame.Frame{Version: 1, StreamID: "s"}
	if b, err := frame.EncodeUnvalidated(nil, &noBody); err != nil || !bytes.Equal(b, mustHex(t, "08 01 12 01 73")) {
		t.Errorf("EncodeUnvalidated without body: got %x, %v, want 0801120173, nil", b, err)
	}
}
