package interop_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/relay/frame"
)

// Reference executor warnings for frames it drops (spec/relay-noise.md §12.1), and the error
// prefix its relay code adds.
const (
	warnInvalid   = "dropping invalid Noise relay frame: exec-server protocol error: "
	warnMalformed = "dropping malformed Noise relay frame from harness: exec-server protocol error: "
)

// TestFrameValidation_MatchesReferenceWarnings is a differential test of relay/frame's Decode
// and Validate against the released executor: a sequence of frames is written on the executor's
// rendezvous socket and the executor's "dropping … frame" warnings must be exactly those that
// our Decode/Validate predict, in order, with Validate's texts verbatim (spec §3). Frames we
// accept must draw no warning. Decode failures are compared by prefix only: the decoder detail
// is prost's text (e.g. "failed to decode Protobuf message: RelayMessageFrame.stream_id: buffer
// underflow"), which we do not reproduce. Runs against each reference release.
func TestFrameValidation_MatchesReferenceWarnings(t *testing.T) {
	refbin.ForEachRelease(t, testFrameValidation)
}

func testFrameValidation(t *testing.T, r refbin.Release) {
	fx := newRegistryFixture(t, interopEnvID, interopRegistrationID, interopBearer)
	re := startReferenceExecutor(t, r, fx)
	defer fx.checkHandlers()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sock := fx.nextSocket(ctx)
	defer sock.conn.CloseNow()

	enc := func(f frame.Frame) []byte {
		b, err := frame.EncodeUnvalidated(nil, &f)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	withField := func(b []byte, num protowire.Number, v []byte) []byte {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		return protowire.AppendBytes(b, v)
	}
	data := func(idx, count uint32, p []byte) *frame.Data {
		return &frame.Data{SegmentIndex: idx, SegmentCount: count, Payload: p}
	}
	cases := []struct {
		name string
		msg  []byte
	}{
		{"version 2", enc(frame.Frame{Version: 2, StreamID: "s", Body: &frame.Resume{}})},
		{"version 0", enc(frame.Frame{StreamID: "s", Body: &frame.Resume{}})},
		{"version beats blank id and missing body", enc(frame.Frame{Version: 7})},
		{"empty stream id", enc(frame.Frame{Version: 1, Body: &frame.Resume{}})},
		{"ascii blank stream id", enc(frame.Frame{Version: 1, StreamID: " \t\r\n", Body: &frame.Resume{}})},
		{"unicode blank stream id", enc(frame.Frame{Version: 1, StreamID: "\u00a0\u2028\u3000\u0085", Body: &frame.Resume{}})},
		{"blank id beats bad data", enc(frame.Frame{Version: 1, StreamID: " ", Body: data(3, 0, nil)})},
		{"data segment_count 0", enc(frame.Frame{Version: 1, StreamID: "s", Body: data(0, 0, []byte{1})})},
		{"data segment_count 2", enc(frame.Frame{Version: 1, StreamID: "s", Body: data(0, 2, []byte{1})})},
		{"data segment_index 1", enc(frame.Frame{Version: 1, StreamID: "s", Body: data(1, 1, []byte{1})})},
		{"data empty payload", enc(frame.Frame{Version: 1, StreamID: "s", Body: data(0, 1, nil)})},
		{"reset without reason", enc(frame.Frame{Version: 1, StreamID: "s", Body: &frame.Reset{}})},
		{"handshake without payload", enc(frame.Frame{Version: 1, StreamID: "s", Body: &frame.Handshake{}})},
		{"no body", enc(frame.Frame{Version: 1, StreamID: "s"})},
		{"unknown body field 13", withField(enc(frame.Frame{Version: 1, StreamID: "s"}), 13, nil)},
		{"resume 300-char id accepted", enc(frame.Frame{Version: 1, StreamID: strings.Repeat("r", 300), Body: &frame.Resume{}})},
		{"ack_frame accepted", enc(frame.Frame{Version: 1, StreamID: "s", Ack: 9, AckBits: 9, Body: &frame.Ack{}})},
		{"heartbeat accepted", enc(frame.Frame{Version: 1, StreamID: "s", Body: &frame.Heartbeat{}})},
		{"trace fields skipped", withField(withField(enc(frame.Frame{Version: 1, StreamID: "s", Body: &frame.Resume{}}), 11, []byte("00-ab-cd-01")), 12, []byte("k=v"))},
		{"traceparent invalid UTF-8", withField(enc(frame.Frame{Version: 1, StreamID: "s", Body: &frame.Resume{}}), 11, []byte{0xff})},
		{"tracestate wrong wire type", append(enc(frame.Frame{Version: 1, StreamID: "s", Body: &frame.Resume{}}), 0x60, 0x01)},
		{"unknown field 20 wrong-looking types skipped", append(enc(frame.Frame{Version: 1, StreamID: "s", Body: &frame.Resume{}}), 0xa0, 0x01, 0x05, 0xa5, 0x01, 1, 2, 3, 4)},
		{"merged data bodies", append(enc(frame.Frame{Version: 1, StreamID: "s", Body: &frame.Resume{}}), 0x2a, 0x02, 0x08, 0x01, 0x2a, 0x00)},
		{"truncated stream id", []byte{0x08, 0x01, 0x12, 0x05}},
		{"stream id wrong wire type", []byte{0x08, 0x01, 0x10, 0x05}},
		{"stream id invalid UTF-8", []byte{0x08, 0x01, 0x12, 0x01, 0xff, 0x3a, 0x00}},
		{"reset reason invalid UTF-8", []byte{0x08, 0x01, 0x12, 0x01, 's', 0x42, 0x03, 0x0a, 0x01, 0xc3}},
		{"data seq wrong wire type", []byte{0x08, 0x01, 0x12, 0x01, 's', 0x2a, 0x02, 0x0a, 0x00}},
		{"field number 0", []byte{0x00, 0x01}},
		{"stray end group", []byte{0x08, 0x01, 0x0c}},
		// The last case is the marker the test waits for.
		{"marker: version 3", enc(frame.Frame{Version: 3, StreamID: "marker", Body: &frame.Resume{}})},
	}

	var want []string
	for _, c := range cases {
		var f frame.Frame
		err := frame.Decode(&f, c.msg)
		switch {
		case errors.Is(err, frame.ErrMalformed):
			want = append(want, warnMalformed+"invalid relay message frame: ")
		case err != nil:
			t.Fatalf("%s: Decode: %v", c.name, err)
		default:
			if verr := f.Validate(); verr != nil {
				want = append(want, warnInvalid+verr.Error())
			} else {
				want = append(want, "") // no warning expected; kept for attribution below
			}
		}
		if err := sock.conn.Write(ctx, websocket.MessageBinary, c.msg); err != nil {
			t.Fatalf("%s: writing frame: %v", c.name, err)
		}
	}
	lastWant := want[len(want)-1]
	if err := re.stderr.waitFor(ctx, lastWant); err != nil {
		t.Fatalf("waiting for the executor's warning for the marker frame: %v", err)
	}

	got := droppingLines(re.stderr.String())
	gi := 0
	for i, c := range cases {
		w := want[i]
		if w == "" {
			continue
		}
		if gi >= len(got) {
			t.Errorf("%s: executor logged nothing, want %q", c.name, w)
			continue
		}
		g := got[gi]
		gi++
		ok := g == w
		if strings.HasPrefix(w, warnMalformed) {
			ok = strings.HasPrefix(g, w)
		}
		if !ok {
			t.Errorf("%s: executor logged %q, want %q (warnings are in order; an unexpected one shifts the rest)", c.name, g, w)
		}
	}
	for ; gi < len(got); gi++ {
		t.Errorf("unexpected extra executor warning %q", got[gi])
	}
}

var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// droppingLines returns the "dropping … frame" warnings in the executor's log, from "dropping".
func droppingLines(log string) []string {
	var out []string
	for _, line := range strings.Split(ansiEscape.ReplaceAllString(log, ""), "\n") {
		if i := strings.Index(line, "dropping "); i >= 0 && strings.Contains(line, "Noise relay frame") {
			out = append(out, strings.TrimRight(line[i:], "\r"))
		}
	}
	return out
}
