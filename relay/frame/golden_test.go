package frame_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execlab/executor/relay/frame"
)

// TestDecode_ReferenceGolden decodes frames written by the released Rust executor (captured by
// test/interop; regenerate with testdata/reference/regen.sh), checks their content, and requires
// Encode to reproduce them byte for byte.
func TestDecode_ReferenceGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "reference", "*.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden frames in testdata/reference; run testdata/reference/regen.sh")
	}
	nextSeq := uint32(0) // data seqs increase; the capture skips some large frames
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			var f frame.Frame
			if err := frame.Decode(&f, b); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if err := f.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			// Names are <index>-<kind>-<size>.bin.
			if kind := strings.Split(filepath.Base(name), "-")[1]; frame.KindOf(f.Body).String() != kind {
				t.Errorf("kind: got %s, want %s", frame.KindOf(f.Body), kind)
			}
			if len(f.StreamID) != 36 || f.Ack != 0 || f.AckBits != 0 {
				t.Errorf("header: got %d-byte stream id, ack %d, ack_bits %d; want 36, 0, 0", len(f.StreamID), f.Ack, f.AckBits)
			}
			switch body := f.Body.(type) {
			case *frame.Handshake:
				if len(body.Payload) != 3424 {
					t.Errorf("message 2: got %d bytes, want 3424", len(body.Payload))
				}
			case *frame.Data:
				if body.Seq < nextSeq {
					t.Errorf("data seq: got %d, want >= %d", body.Seq, nextSeq)
				}
				nextSeq = body.Seq + 1
				if body.SegmentIndex != 0 || body.SegmentCount != 1 {
					t.Errorf("data segments: got %d/%d, want 0/1", body.SegmentIndex, body.SegmentCount)
				}
			case *frame.Reset:
				if body.Reason != frame.ResetReasonProtocolError {
					t.Errorf("reset reason: got %q, want %q", body.Reason, frame.ResetReasonProtocolError)
				}
			}
			got, err := frame.Encode(nil, &f)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if !bytes.Equal(got, b) {
				t.Errorf("Encode: got %x…, want %x…", head(got), head(b))
			}
		})
	}
}
