package frame_test

import (
	"bytes"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/execlab/executor/proto/relayv1"
	"github.com/execlab/executor/relay/frame"
)

// FuzzDecode feeds arbitrary messages to Decode (seed corpus in testdata/fuzz/FuzzDecode plus
// the vectors below) and checks that:
//   - Decode never panics and fails only with ErrMalformed or ErrMessageTooLarge;
//   - whatever decodes re-encodes to a canonical form that decodes to the same frame and is a
//     fixed point of Decode→Encode;
//   - protobuf-go with the generated structs accepts what Decode accepts and reads the same
//     fields (Decode is at most stricter: like prost it rejects wrong wire types on known
//     fields, where protobuf-go treats them as unknown);
//   - Validate is deterministic on the decoded frame and Encode agrees with it.
func FuzzDecode(f *testing.F) {
	for _, fr := range allBodiesFrames() {
		b, err := frame.Encode(nil, &fr)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) < 8<<10 {
			f.Add(b)
		}
	}
	f.Add([]byte{0x08, 0x01, 0x12, 0x03, 's', '-', '1', 0x3a, 0x00})
	f.Add([]byte{0x08, 0x02, 0x12, 0x01, ' ', 0x2a, 0x00})
	f.Add([]byte{0x08, 0x01, 0x12, 0x01, 's', 0x18, 0x05, 0x20, 0x03, 0x32, 0x00})             // ack_frame with ack 5, ack_bits 3
	f.Add([]byte{0x08, 0x01, 0x12, 0x01, 's', 0x52, 0x01, 0x01, 0xa0, 0x06, 0x01})             // handshake with relay_features 1
	f.Add([]byte{0x08, 0x01, 0x12, 0x01, 's', 0x3a, 0x00, 0xa2, 0x06, 0x01, 0x07, 0xa0, 0x06}) // features as bytes, truncated
	f.Fuzz(func(t *testing.T, in []byte) {
		var fr frame.Frame
		err := frame.Decode(&fr, in)
		if err != nil {
			if !errors.Is(err, frame.ErrMalformed) && !errors.Is(err, frame.ErrMessageTooLarge) {
				t.Fatalf("Decode: unexpected error class %v", err)
			}
			return
		}
		var m relayv1.RelayMessageFrame
		if perr := proto.Unmarshal(in, &m); perr != nil {
			t.Fatalf("Decode accepted %x, protobuf-go refused it: %v", in, perr)
		}
		if pf := fromProto(&m); !equalFrames(&fr, &pf) {
			t.Fatalf("Decode and protobuf-go disagree on %x: got %+v %+v, protobuf-go %+v %+v", in, fr, fr.Body, pf, pf.Body)
		}
		verr := fr.Validate()
		enc, err := frame.EncodeUnvalidated(nil, &fr)
		if err != nil {
			t.Fatalf("EncodeUnvalidated of a decoded frame: %v", err)
		}
		var again frame.Frame
		if err := frame.Decode(&again, enc); err != nil {
			t.Fatalf("Decode of canonical %x: %v", enc, err)
		}
		if !equalFrames(&fr, &again) {
			t.Fatalf("canonical re-decode differs: got %+v, want %+v", again, fr)
		}
		enc2, _ := frame.EncodeUnvalidated(nil, &again)
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("canonical encoding is not a fixed point: %x then %x", enc, enc2)
		}
		if v2 := again.Validate(); (verr == nil) != (v2 == nil) || (verr != nil && verr.Error() != v2.Error()) {
			t.Fatalf("Validate not stable: %v then %v", verr, v2)
		}
		checked, err := frame.Encode(nil, &fr)
		if (err == nil) != (verr == nil) {
			t.Fatalf("Encode error %v disagrees with Validate %v", err, verr)
		}
		if err == nil && !bytes.Equal(checked, enc) {
			t.Fatalf("Encode %x differs from EncodeUnvalidated %x", checked, enc)
		}
	})
}
