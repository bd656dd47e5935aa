package harness_test

import (
	"fmt"
	"testing"

	"github.com/execlab/executor/harness"
)

func note(method, params string) harness.Notification {
	return harness.Notification{Method: method, Params: []byte(params)}
}

func outN(seq int) harness.Notification {
	return note("process/output", fmt.Sprintf(`{"processId":"p","seq":%d,"stream":"stdout","chunk":"YQ=="}`, seq))
}

func kinds(evs []harness.ProcessEvent) string {
	s := ""
	for _, e := range evs {
		s += fmt.Sprintf("%s@%d ", e.Kind, e.Seq)
	}
	return s
}

func TestProcessEvents_OrderDuplicatesAndGap(t *testing.T) {
	e := harness.NewProcessEvents("p")
	var got []harness.ProcessEvent
	feed := []harness.Notification{
		note("process/exited", `{"processId":"p","seq":6,"exitCode":3}`), // overtakes output
		outN(1),
		outN(1), // duplicate
		note("process/output", `{"processId":"other","seq":2,"stream":"stdout","chunk":"YQ=="}`),
		note(harness.MethodOutputGap, `{"processId":"p","seq":2,"lastSeq":4}`),
		outN(3), // inside the gap: superseded
		outN(5),
		note("process/closed", `{"processId":"p","seq":7}`),
		outN(8), // after the close
	}
	for _, n := range feed {
		var err error
		if got, err = e.Add(got, n); err != nil {
			t.Fatalf("Add(%s): %v", n.Params, err)
		}
	}
	if want := "output@1 gap@2 output@5 exited@6 closed@7 "; kinds(got) != want {
		t.Fatalf("got %s, want %s", kinds(got), want)
	}
	if got[1].LastSeq != 4 || got[3].ExitCode != 3 || !e.Done() || e.PendingBytes() != 0 {
		t.Fatalf("gap last %d, exit %d, done %v, pending %d; want 4, 3, true, 0", got[1].LastSeq, got[3].ExitCode, e.Done(), e.PendingBytes())
	}
}

func TestProcessEvents_FinalGapEnds(t *testing.T) {
	e := harness.NewProcessEvents("p")
	got, _ := e.Add(nil, outN(1))
	got, _ = e.Add(got, note(harness.MethodOutputGap, `{"processId":"p","seq":2,"final":true}`))
	got, _ = e.Add(got, outN(2))
	if want := "output@1 gap@2 "; kinds(got) != want || !got[1].Final || !e.Done() {
		t.Fatalf("got %s (final %v, done %v), want %s, final, done", kinds(got), got[len(got)-1].Final, e.Done(), want)
	}
}

func TestProcessEvents_Malformed(t *testing.T) {
	e := harness.NewProcessEvents("p")
	if _, err := e.Add(nil, note("process/exited", `{"processId":"p","seq":"x"}`)); err == nil {
		t.Fatal("a malformed event of the process was accepted")
	}
}

// FuzzProcessEvents: any sequence of notifications yields events in strictly increasing
// seq order, each seq once, nothing after the last event, and no panic.
func FuzzProcessEvents(f *testing.F) {
	f.Add([]byte(`{"processId":"p","seq":2,"exitCode":0}`), []byte(`{"processId":"p","seq":1,"stream":"stdout","chunk":"YQ=="}`), []byte(`{"processId":"p","seq":3}`), uint8(0))
	f.Add([]byte(`{"processId":"p","seq":1,"lastSeq":4}`), []byte(`{"processId":"p","seq":3,"stream":"pty","chunk":""}`), []byte(`{"processId":"p","seq":5}`), uint8(1))
	f.Add([]byte(`{"processId":"p","seq":1,"final":true}`), []byte(`{"processId":"p","seq":18446744073709551615,"stream":"stdout","chunk":"YQ=="}`), []byte(`{}`), uint8(2))
	methods := []string{"process/output", "process/exited", "process/closed", harness.MethodOutputGap}
	f.Fuzz(func(t *testing.T, a, b, c []byte, order uint8) {
		e := harness.NewProcessEvents("p")
		var got []harness.ProcessEvent
		for i, params := range [][]byte{a, b, c, a, b, c} {
			n := harness.Notification{Method: methods[(int(order)+i)%len(methods)], Params: params}
			got, _ = e.Add(got, n)
		}
		var next uint64 = 1
		for i, ev := range got {
			if ev.Seq < next {
				t.Fatalf("event %d (%s) at seq %d, want ≥ %d", i, ev.Kind, ev.Seq, next)
			}
			if i > 0 && (got[i-1].Kind == harness.EventClosed || got[i-1].Final) {
				t.Fatalf("event %d after the last one", i)
			}
			next = ev.Seq + 1
			if ev.Kind == harness.EventGap && ev.LastSeq >= ev.Seq {
				next = ev.LastSeq + 1
			}
		}
	})
}
