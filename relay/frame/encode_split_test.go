package frame_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/execlab/executor/relay/frame"
)

// TestEncodeSplit_JoinsToEncode: head ‖ tail is byte for byte Encode's output for every kind
// of frame, the tail is the payload itself (not a copy) exactly when the payload is the last
// thing on the wire, and invalid frames fail as in Encode.
func TestEncodeSplit_JoinsToEncode(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	payload := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	const id = "3f0c1e9a-0d5b-4b1e-8a57-6c2f0e4d9b11"
	type tc struct {
		name      string
		f         frame.Frame
		wantSplit bool // the tail is the payload
	}
	cases := []tc{
		{"data", frame.Frame{Version: 1, StreamID: id, Body: &frame.Data{Seq: 7, SegmentCount: 1, Payload: payload(61456)}}, true},
		{"data seq 0 one byte", frame.Frame{Version: 1, StreamID: "s", Body: &frame.Data{SegmentCount: 1, Payload: payload(1)}}, true},
		{"data with ack", frame.Frame{Version: 1, StreamID: id, Ack: 99, AckBits: 0xfffffff0, Body: &frame.Data{Seq: 1 << 31, SegmentCount: 1, Payload: payload(300)}}, true},
		{"data with traceparent", frame.Frame{Version: 1, StreamID: id, Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", Body: &frame.Data{Seq: 3, SegmentCount: 1, Payload: payload(64)}}, false},
		{"handshake", frame.Frame{Version: 1, StreamID: id, Body: &frame.Handshake{Payload: payload(2400)}}, true},
		{"handshake with features", frame.Frame{Version: 1, StreamID: id, Features: frame.FeatureARQ, Body: &frame.Handshake{Payload: payload(1200)}}, false},
		{"ack", frame.Frame{Version: 1, StreamID: id, Ack: 5, AckBits: 3, Body: &frame.Ack{}}, false},
		{"reset", frame.Frame{Version: 1, StreamID: id, Body: &frame.Reset{Reason: frame.ResetReasonProtocolError}}, false},
		{"resume", frame.Frame{Version: 1, StreamID: id, Body: &frame.Resume{NextSeq: 4}}, false},
	}
	for i := range 50 {
		cases = append(cases, tc{"random data", frame.Frame{
			Version: 1, StreamID: id[:1+rng.IntN(len(id))], Ack: rng.Uint32() >> rng.IntN(32), AckBits: rng.Uint32() >> rng.IntN(32),
			Body: &frame.Data{Seq: uint32(i) << rng.IntN(28), SegmentCount: 1, Payload: payload(1 + rng.IntN(70_000))},
		}, true})
	}
	for _, c := range cases {
		want, err := frame.Encode(nil, &c.f)
		if err != nil {
			t.Fatalf("%s: Encode: %v", c.name, err)
		}
		prefix := []byte("keep")
		head, tail, err := frame.EncodeSplit(append([]byte(nil), prefix...), &c.f)
		if err != nil {
			t.Fatalf("%s: EncodeSplit: %v", c.name, err)
		}
		if !bytes.HasPrefix(head, prefix) {
			t.Fatalf("%s: EncodeSplit did not append to dst", c.name)
		}
		got := append(head[len(prefix):len(head):len(head)], tail...)
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: head ‖ tail (%d bytes) differs from Encode (%d bytes)", c.name, len(got), len(want))
		}
		if split := tail != nil; split != c.wantSplit {
			t.Fatalf("%s: split = %v, want %v", c.name, split, c.wantSplit)
		}
		if c.wantSplit {
			var p []byte
			switch b := c.f.Body.(type) {
			case *frame.Data:
				p = b.Payload
			case *frame.Handshake:
				p = b.Payload
			}
			if &tail[0] != &p[0] || len(tail) != len(p) {
				t.Fatalf("%s: tail is not the payload itself", c.name)
			}
		}
	}

	bad := frame.Frame{Version: 2, StreamID: id, Body: &frame.Data{SegmentCount: 1, Payload: payload(10)}}
	dst := []byte("x")
	head, tail, err := frame.EncodeSplit(dst, &bad)
	if err == nil || string(head) != "x" || tail != nil {
		t.Fatalf("invalid frame: got (%q, %d tail bytes, %v), want dst unchanged and an error", head, len(tail), err)
	}
}

// TestEncodeSplit_ZeroAllocs pins the relay write path: splitting a data frame into a buffer
// with room allocates nothing.
func TestEncodeSplit_ZeroAllocs(t *testing.T) {
	f := dataFrame()
	buf := make([]byte, 0, 128)
	if got := testing.AllocsPerRun(100, func() {
		if _, _, err := frame.EncodeSplit(buf[:0], &f); err != nil {
			t.Fatal(err)
		}
	}); got != 0 {
		t.Errorf("EncodeSplit: got %v allocs per run, want 0", got)
	}
}
