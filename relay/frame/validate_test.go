package frame_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/execlab/executor/relay/frame"
)

// TestValidate_RejectsEachRule is validate_rejects_each_rule (spec §3): each rule yields the
// reference's text, earlier rules win, a 300-character id passes and a blank one fails.
func TestValidate_RejectsEachRule(t *testing.T) {
	data := func(idx, count uint32, p []byte) *frame.Data {
		return &frame.Data{SegmentIndex: idx, SegmentCount: count, Payload: p}
	}
	tests := []struct {
		name    string
		f       frame.Frame
		wantErr error
		wantMsg string
	}{
		{"ok data", frame.Frame{Version: 1, StreamID: "s", Body: data(0, 1, []byte{1})}, nil, ""},
		{"ok 300-char id", frame.Frame{Version: 1, StreamID: strings.Repeat("a", 300), Body: &frame.Resume{}}, nil, ""},
		{"ok 1 KiB id", frame.Frame{Version: 1, StreamID: strings.Repeat("a", 1024), Body: &frame.Resume{}}, nil, ""},
		{"ok padded id", frame.Frame{Version: 1, StreamID: " s ", Body: &frame.Ack{}}, nil, ""},
		{"ok heartbeat", frame.Frame{Version: 1, StreamID: "s", Body: &frame.Heartbeat{}}, nil, ""},
		{"ok ack fields ignored", frame.Frame{Version: 1, StreamID: "s", Ack: 5, AckBits: 6, Body: &frame.Resume{NextSeq: 9}}, nil, ""},
		{"version 0", frame.Frame{StreamID: "s", Body: &frame.Resume{}}, frame.ErrUnsupportedVersion, "unsupported relay message frame version 0"},
		{"version 2 beats blank id", frame.Frame{Version: 2, Body: nil}, frame.ErrUnsupportedVersion, "unsupported relay message frame version 2"},
		{"version max", frame.Frame{Version: 1<<32 - 1, StreamID: "s", Body: &frame.Resume{}}, frame.ErrUnsupportedVersion, "unsupported relay message frame version 4294967295"},
		{"empty id", frame.Frame{Version: 1, Body: &frame.Resume{}}, frame.ErrMissingStreamID, "relay message frame is missing stream_id"},
		{"blank id", frame.Frame{Version: 1, StreamID: " \t\n", Body: &frame.Resume{}}, frame.ErrMissingStreamID, "relay message frame is missing stream_id"},
		{"unicode blank id", frame.Frame{Version: 1, StreamID: "\u00a0\u3000\u2028", Body: &frame.Resume{}}, frame.ErrMissingStreamID, "relay message frame is missing stream_id"},
		{"blank id beats missing body", frame.Frame{Version: 1, StreamID: " "}, frame.ErrMissingStreamID, "relay message frame is missing stream_id"},
		{"id over 1 KiB", frame.Frame{Version: 1, StreamID: strings.Repeat("a", 1025), Body: &frame.Resume{}}, frame.ErrStreamIDTooLong, "relay message frame stream_id is too long"},
		{"data segment_index 1", frame.Frame{Version: 1, StreamID: "s", Body: data(1, 1, []byte{1})}, frame.ErrDataMissingFields, "relay data message frame is missing required fields"},
		{"data segment_count 0", frame.Frame{Version: 1, StreamID: "s", Body: data(0, 0, []byte{1})}, frame.ErrDataMissingFields, "relay data message frame is missing required fields"},
		{"data segment_count 2", frame.Frame{Version: 1, StreamID: "s", Body: data(0, 2, []byte{1})}, frame.ErrDataMissingFields, "relay data message frame is missing required fields"},
		{"data empty payload", frame.Frame{Version: 1, StreamID: "s", Body: data(0, 1, nil)}, frame.ErrDataMissingFields, "relay data message frame is missing required fields"},
		{"reset empty reason", frame.Frame{Version: 1, StreamID: "s", Body: &frame.Reset{}}, frame.ErrResetMissingReason, "relay reset message frame is missing reason"},
		{"handshake empty payload", frame.Frame{Version: 1, StreamID: "s", Body: &frame.Handshake{}}, frame.ErrHandshakeMissingPayload, "relay handshake message frame is missing payload"},
		{"no body", frame.Frame{Version: 1, StreamID: "s"}, frame.ErrMissingBody, "relay message frame is missing body"},
		{"nil *Data body", frame.Frame{Version: 1, StreamID: "s", Body: (*frame.Data)(nil)}, frame.ErrMissingBody, "relay message frame is missing body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.f.Validate()
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("got %v, want %v", err, tt.wantErr)
			}
			if err.Error() != tt.wantMsg {
				t.Errorf("got message %q, want %q", err.Error(), tt.wantMsg)
			}
		})
	}
}

// TestValidate_DecodedUnknownBody: a frame whose only body is an unknown future member decodes
// (the member is skipped) and then fails with "missing body", as the reference does.
func TestValidate_DecodedUnknownBody(t *testing.T) {
	var f frame.Frame
	if err := frame.Decode(&f, mustHex(t, "08 01 12 01 73 6a 00")); err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if err := f.Validate(); !errors.Is(err, frame.ErrMissingBody) {
		t.Errorf("Validate: got %v, want ErrMissingBody", err)
	}
}

func TestKind_String(t *testing.T) {
	tests := []struct {
		k    frame.Kind
		want string
	}{
		{frame.KindNone, "none"}, {frame.KindData, "data"}, {frame.KindAck, "ack_frame"},
		{frame.KindResume, "resume"}, {frame.KindReset, "reset"}, {frame.KindHeartbeat, "heartbeat"},
		{frame.KindHandshake, "handshake"}, {frame.Kind(200), "unknown"},
	}
	for _, tt := range tests {
		if got := tt.k.String(); got != tt.want {
			t.Errorf("Kind(%d).String(): got %q, want %q", tt.k, got, tt.want)
		}
	}
}
