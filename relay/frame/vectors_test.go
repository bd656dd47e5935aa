package frame_test

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/execlab/executor/relay/frame"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// TestEncode_SpecVectors pins the byte vectors of spec/relay-noise.md §2.2 in both directions.
func TestEncode_SpecVectors(t *testing.T) {
	tests := []struct {
		name string
		f    frame.Frame
		hex  string
	}{
		{
			name: "reset",
			f:    frame.Frame{Version: 1, StreamID: "s-1", Body: &frame.Reset{Reason: frame.ResetReasonProtocolError}},
			hex:  "08 01 12 03 732d31 42 1c 0a 1a 6e6f6973655f72656c61795f70726f746f636f6c5f6572726f72",
		},
		{
			name: "resume",
			f:    frame.Frame{Version: 1, StreamID: "s-1", Body: &frame.Resume{}},
			hex:  "08 01 12 03 732d31 3a 00",
		},
		{
			name: "data seq 0",
			f:    frame.Frame{Version: 1, StreamID: "s-1", Body: &frame.Data{SegmentCount: 1, Payload: []byte{1, 2, 3}}},
			hex:  "08 01 12 03 732d31 2a 07 18 01 22 03 010203",
		},
		{
			name: "data seq 1",
			f:    frame.Frame{Version: 1, StreamID: "s-1", Body: &frame.Data{Seq: 1, SegmentCount: 1, Payload: []byte{1, 2, 3}}},
			hex:  "08 01 12 03 732d31 2a 09 08 01 18 01 22 03 010203",
		},
		// Empty bodies must still be present (spec §2.2, §16 item 11).
		{
			name: "ack_frame",
			f:    frame.Frame{Version: 1, StreamID: "s-1", Body: &frame.Ack{}},
			hex:  "08 01 12 03 732d31 32 00",
		},
		{
			name: "heartbeat",
			f:    frame.Frame{Version: 1, StreamID: "s-1", Body: &frame.Heartbeat{}},
			hex:  "08 01 12 03 732d31 4a 00",
		},
		{
			name: "handshake",
			f:    frame.Frame{Version: 1, StreamID: "s-1", Body: &frame.Handshake{Payload: []byte{0xaa, 0xbb}}},
			hex:  "08 01 12 03 732d31 52 04 0a 02 aabb",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := mustHex(t, tt.hex)
			got, err := frame.Encode(nil, &tt.f)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Encode: got %x, want %x", got, want)
			}
			var dec frame.Frame
			if err := frame.Decode(&dec, want); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if err := dec.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if !equalFrames(&dec, &tt.f) {
				t.Errorf("Decode: got %+v (%+v), want %+v (%+v)", dec, dec.Body, tt.f, tt.f.Body)
			}
		})
	}
}

// TestEncode_ObservedSizes pins the frame sizes observed from codex 0.169.0 with a 36-character
// stream id (spec/relay-noise.md §2.2).
func TestEncode_ObservedSizes(t *testing.T) {
	id := "0b4f4a2e-6c55-4f8e-9a0e-5d1c2b3a4f5e"
	tests := []struct {
		name string
		body frame.Body
		want int
	}{
		{"reset", &frame.Reset{Reason: frame.ResetReasonProtocolError}, 70},
		{"resume", &frame.Resume{}, 42},
		{"handshake message 2", &frame.Handshake{Payload: make([]byte, 3424)}, 3470},
		{"data full record", &frame.Data{Seq: 1, SegmentCount: 1, Payload: make([]byte, 61440+16)}, 61508},
		{"handshake message 1, 52-byte authorization", &frame.Handshake{Payload: make([]byte, 3568+52)}, 3666},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := frame.Encode(nil, &frame.Frame{Version: 1, StreamID: id, Body: tt.body})
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if len(b) != tt.want {
				t.Errorf("got %d bytes, want %d", len(b), tt.want)
			}
		})
	}
}

func equalFrames(a, b *frame.Frame) bool {
	if a.Version != b.Version || a.StreamID != b.StreamID || a.Ack != b.Ack || a.AckBits != b.AckBits || a.Traceparent != b.Traceparent ||
		a.Features != b.Features {
		return false
	}
	return equalBodies(a.Body, b.Body)
}

func equalBodies(a, b frame.Body) bool {
	if frame.KindOf(a) != frame.KindOf(b) {
		return false
	}
	switch x := a.(type) {
	case *frame.Data:
		y := b.(*frame.Data)
		return x.Seq == y.Seq && x.SegmentIndex == y.SegmentIndex && x.SegmentCount == y.SegmentCount &&
			bytes.Equal(x.Payload, y.Payload)
	case *frame.Resume:
		return x.NextSeq == b.(*frame.Resume).NextSeq
	case *frame.Reset:
		return x.Reason == b.(*frame.Reset).Reason
	case *frame.Handshake:
		return bytes.Equal(x.Payload, b.(*frame.Handshake).Payload)
	}
	return true
}
