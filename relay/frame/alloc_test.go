package frame_test

import (
	"testing"

	"github.com/execlab/executor/relay/frame"
)

const benchPayload = 60 << 10 // 60 KiB record, close to the 61456-byte maximum

func dataFrame() frame.Frame {
	return frame.Frame{
		Version:  1,
		StreamID: "3f0c1e9a-0d5b-4b1e-8a57-6c2f0e4d9b11",
		Body:     &frame.Data{Seq: 12345, SegmentCount: 1, Payload: make([]byte, benchPayload)},
	}
}

// TestEncodeDecode_ZeroAllocs pins the hot path: encoding a 60 KiB data frame into a buffer with
// room and decoding it into a Frame already holding a *Data of the same stream allocate nothing.
func TestEncodeDecode_ZeroAllocs(t *testing.T) {
	f := dataFrame()
	buf := make([]byte, 0, benchPayload+128)
	var err error
	if got := testing.AllocsPerRun(100, func() {
		buf, err = frame.Encode(buf[:0], &f)
	}); got != 0 {
		t.Errorf("Encode: got %v allocs per run, want 0", got)
	}
	if err != nil {
		t.Fatal(err)
	}
	var dec frame.Frame
	if err := frame.Decode(&dec, buf); err != nil { // first decode allocates the body and id
		t.Fatal(err)
	}
	if got := testing.AllocsPerRun(100, func() {
		err = frame.Decode(&dec, buf)
		if err == nil {
			err = dec.Validate()
		}
	}); got != 0 {
		t.Errorf("Decode+Validate: got %v allocs per run, want 0", got)
	}
	if err != nil {
		t.Fatal(err)
	}
	if d := dec.Body.(*frame.Data); d.Seq != 12345 || len(d.Payload) != benchPayload || &d.Payload[0] != &buf[len(buf)-benchPayload] {
		t.Errorf("Decode: got seq %d, %d-byte payload (aliased %v), want seq 12345, %d bytes aliasing the input",
			d.Seq, len(d.Payload), &d.Payload[0] == &buf[len(buf)-benchPayload], benchPayload)
	}
}

func BenchmarkEncodeData60K(b *testing.B) {
	f := dataFrame()
	buf := make([]byte, 0, benchPayload+128)
	b.SetBytes(benchPayload)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = frame.Encode(buf[:0], &f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeData60K(b *testing.B) {
	f := dataFrame()
	buf, err := frame.Encode(nil, &f)
	if err != nil {
		b.Fatal(err)
	}
	var dec frame.Frame
	b.SetBytes(benchPayload)
	b.ReportAllocs()
	for b.Loop() {
		if err := frame.Decode(&dec, buf); err != nil {
			b.Fatal(err)
		}
		if err := dec.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}
