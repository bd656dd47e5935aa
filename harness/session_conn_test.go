package harness

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/execlab/executor/noise/channel"
)

func TestProcState_DeliveredOutOfOrder(t *testing.T) {
	var p procState
	for _, seq := range []uint64{1, 3, 2, 5} {
		if p.delivered(seq) {
			t.Fatalf("seq %d reported delivered before delivery", seq)
		}
		p.mark(seq)
	}
	if p.watermark != 3 || !p.above[5] || len(p.above) != 1 {
		t.Errorf("got watermark %d above %v, want 3 and {5}", p.watermark, p.above)
	}
	for _, seq := range []uint64{1, 2, 3, 5} {
		if !p.delivered(seq) {
			t.Errorf("seq %d: got not delivered, want delivered", seq)
		}
	}
	if p.delivered(4) {
		t.Errorf("seq 4: got delivered, want not")
	}
	p.closeSeq = 5
	if p.done() {
		t.Errorf("done with seq 4 missing")
	}
	p.mark(4)
	if !p.done() {
		t.Errorf("not done after every seq up to the close")
	}
}

// event is a decoded synthesized notification, for comparisons.
type event struct {
	Method string         `json:"method"`
	Params map[string]any `json:"params"`
}

func decodeEvents(t *testing.T, msgs [][]byte) []event {
	t.Helper()
	out := make([]event, len(msgs))
	for i, m := range msgs {
		if err := json.Unmarshal(m, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestCatchUp(t *testing.T) {
	out := func(seq float64, chunk string) event {
		return event{"process/output", map[string]any{"processId": "p", "seq": seq, "stream": "stdout", "chunk": chunk}}
	}
	exited := func(seq, code float64) event {
		return event{"process/exited", map[string]any{"processId": "p", "seq": seq, "exitCode": code, "sandboxDenied": false}}
	}
	gap := func(seq, last float64) event {
		return event{MethodOutputGap, map[string]any{"processId": "p", "seq": seq, "lastSeq": last}}
	}
	closed := func(seq float64) event { return event{"process/closed", map[string]any{"processId": "p", "seq": seq}} }
	tests := []struct {
		name   string
		state  procState
		result string
		want   []event
	}{
		{"missed output only", procState{watermark: 1},
			`{"chunks":[{"seq":2,"stream":"stdout","chunk":"YQ=="},{"seq":3,"stream":"stdout","chunk":"Yg=="}],"nextSeq":4,"exited":false,"exitCode":null,"closed":false}`,
			[]event{out(2, "YQ=="), out(3, "Yg==")}},
		{"missed exit takes the gap, close at nextSeq-1", procState{watermark: 1},
			`{"chunks":[{"seq":2,"stream":"stdout","chunk":"YQ=="}],"nextSeq":5,"exited":true,"exitCode":3,"closed":true}`,
			[]event{out(2, "YQ=="), exited(3, 3), closed(4)}},
		{"exit already seen", procState{watermark: 3, exitSeen: true},
			`{"chunks":[],"nextSeq":5,"exited":true,"exitCode":0,"closed":true}`,
			[]event{closed(4)}},
		{"close delivered early, output missing", procState{watermark: 1, above: map[uint64]bool{4: true}, closeSeq: 4, exitSeen: true},
			`{"chunks":[{"seq":2,"stream":"stdout","chunk":"YQ=="}],"nextSeq":5,"exited":true,"exitCode":0,"closed":true}`,
			[]event{out(2, "YQ==")}},
		{"evicted output becomes a gap", procState{watermark: 1},
			`{"chunks":[{"seq":5,"stream":"stdout","chunk":"YQ=="}],"nextSeq":6,"exited":false,"exitCode":null,"closed":false}`,
			[]event{gap(2, 4), out(5, "YQ==")}},
		{"exit inside the retained chunks, evicted prefix", procState{watermark: 1},
			`{"chunks":[{"seq":4,"stream":"stdout","chunk":"YQ=="},{"seq":6,"stream":"stdout","chunk":"Yg=="}],"nextSeq":8,"exited":true,"exitCode":2,"closed":true}`,
			[]event{gap(2, 3), out(4, "YQ=="), exited(5, 2), out(6, "Yg=="), closed(7)}},
		{"exit evicted with the output", procState{watermark: 1},
			`{"chunks":[{"seq":6,"stream":"stdout","chunk":"YQ=="}],"nextSeq":8,"exited":true,"exitCode":9,"closed":true}`,
			[]event{gap(2, 4), exited(5, 9), out(6, "YQ=="), closed(7)}},
		{"nothing new", procState{watermark: 2},
			`{"chunks":[],"nextSeq":3,"exited":false,"exitCode":null,"closed":false}`, []event{}},
	}
	for _, tt := range tests {
		msgs, err := catchUp("p", tt.state, []byte(tt.result))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := decodeEvents(t, msgs); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\ngot  %v\nwant %v", tt.name, got, tt.want)
		}
	}
	if _, err := catchUp("p", procState{}, []byte(`{"chunks":"x"}`)); !errors.Is(err, ErrProtocol) {
		t.Errorf("malformed result: got %v, want ErrProtocol", err)
	}
}

func TestRecoverable(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&ConnectError{Status: 409, Code: "environment_offline", Retryable: true}, true},
		{&ConnectError{Status: 401, Code: "unauthorized"}, false},
		{channel.ErrExecutorCredentialsRejected, false},
		{errIncompleteBundle, false},
		{errSessionLost, false},
		{ErrStreamReset, true},
		{errors.New("dial tcp: connection refused"), true},
	}
	for _, tt := range tests {
		if got := recoverable(tt.err); got != tt.want {
			t.Errorf("recoverable(%v): got %v, want %v", tt.err, got, tt.want)
		}
	}
}

func FuzzCatchUp(f *testing.F) {
	f.Add(uint64(1), []byte(`{"chunks":[{"seq":2,"stream":"stdout","chunk":"YQ=="}],"nextSeq":5,"exited":true,"exitCode":3,"closed":true}`))
	f.Add(uint64(0), []byte(`{"chunks":[],"nextSeq":0,"exited":true,"closed":true}`))
	f.Add(uint64(9), []byte(`null`))
	f.Add(uint64(1), []byte(`{"chunks":[{"seq":7,"stream":"stdout","chunk":"YQ=="}],"nextSeq":9223372036854775807,"exited":true,"exitCode":0,"closed":true}`))
	f.Fuzz(func(t *testing.T, watermark uint64, result []byte) {
		msgs, err := catchUp("p", procState{watermark: watermark}, result)
		if err != nil {
			return
		}
		var last uint64
		for i, m := range msgs {
			var e struct {
				Params struct {
					Seq uint64 `json:"seq"`
				} `json:"params"`
			}
			if err := json.Unmarshal(m, &e); err != nil {
				t.Fatalf("synthesized message %d is not JSON: %v", i, err)
			}
			if e.Params.Seq <= watermark || (i > 0 && e.Params.Seq < last) {
				t.Fatalf("synthesized seq %d after watermark %d / previous %d", e.Params.Seq, watermark, last)
			}
			last = e.Params.Seq
		}
	})
}

// TestNextAttempt_FinalAttemptAtDeadline: the back-off is cut so the last attempt starts at
// the deadline; after it, recovery stops.
func TestNextAttempt_FinalAttemptAtDeadline(t *testing.T) {
	now := time.Unix(1000, 0)
	deadline := now.Add(3 * time.Second)
	if d, ok := nextAttempt(now, deadline, time.Second); !ok || d != time.Second {
		t.Errorf("well before the deadline: got %v %v, want 1s true", d, ok)
	}
	if d, ok := nextAttempt(now, deadline, 5*time.Second); !ok || d != 3*time.Second {
		t.Errorf("back-off past the deadline: got %v %v, want 3s true (the final attempt at the deadline)", d, ok)
	}
	if _, ok := nextAttempt(deadline, deadline, time.Second); ok {
		t.Error("at the deadline (the final attempt was made): got another attempt")
	}
}
