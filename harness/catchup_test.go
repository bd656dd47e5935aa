package harness

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/executor/protocol"
)

// fakeReleased is one connection to a fake released executor (spec/jsonrpc.md §3.2) whose
// process "p" has output seqs 1…200 of 1 KiB each, of which its ring kept 51…200, then the
// exit (201, code 3) and the close (202). The connection breaks after `reads` answered
// process/reads, like a stream without ARQ that loses a record.
type fakeReleased struct {
	reads  int         // answered process/reads left before the break
	live   [][]byte    // notifications pushed right after the initialize reply
	log    *[]readCall // every process/read received, across connections
	out    [][]byte    // replies not read yet
	closed bool
}

type readCall struct {
	AfterSeq uint64  `json:"afterSeq"`
	MaxBytes *uint64 `json:"maxBytes"`
	WaitMs   *uint64 `json:"waitMs"`
}

const fakeChunk = 1 << 10

func (f *fakeReleased) WriteMessage(_ context.Context, msg []byte) error {
	if f.closed {
		return io.ErrClosedPipe
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(msg, &m); err != nil || m.ID == nil {
		return err // a notification (initialized)
	}
	switch m.Method {
	case protocol.MethodInitialize:
		f.out = append(f.out, []byte(`{"id":`+string(m.ID)+`,"result":{"sessionId":"s1"}}`))
		f.out = append(f.out, f.live...)
	case protocol.MethodProcessRead:
		var c readCall
		_ = json.Unmarshal(m.Params, &c)
		if f.reads == 0 {
			f.closed = true
			return nil
		}
		f.reads--
		*f.log = append(*f.log, c)
		f.out = append(f.out, f.answer(m.ID, c))
	}
	return nil
}

// answer follows the reference: the first chunk always, then chunks while within maxBytes;
// nextSeq is the last returned seq + 1 under maxBytes, else the next unassigned seq.
func (f *fakeReleased) answer(id json.RawMessage, c readCall) []byte {
	type chunk struct {
		Seq    uint64 `json:"seq"`
		Stream string `json:"stream"`
		Chunk  string `json:"chunk"`
	}
	chunks := []chunk{}
	budget := uint64(1 << 62)
	if c.MaxBytes != nil {
		budget = *c.MaxBytes
	}
	used := uint64(0)
	for seq := max(c.AfterSeq+1, 51); seq <= 200; seq++ {
		if len(chunks) > 0 && used+fakeChunk > budget {
			break
		}
		used += fakeChunk
		data := strings.Repeat(string(rune('a'+seq%26)), fakeChunk)
		chunks = append(chunks, chunk{seq, "stdout", base64.StdEncoding.EncodeToString([]byte(data))})
	}
	next := uint64(203)
	if c.MaxBytes != nil && len(chunks) > 0 {
		next = chunks[len(chunks)-1].Seq + 1
	}
	res, _ := json.Marshal(map[string]any{"chunks": chunks, "nextSeq": next, "exited": true, "exitCode": 3,
		"closed": true, "failure": nil, "sandboxDenied": false})
	return []byte(`{"id":` + string(id) + `,"result":` + string(res) + `}`)
}

func (f *fakeReleased) ReadMessage(context.Context) ([]byte, error) {
	if len(f.out) == 0 {
		return nil, io.EOF // broken (or nothing more will come: the test stops at the close)
	}
	m := f.out[0]
	f.out = f.out[1:]
	return m, nil
}

func (f *fakeReleased) Close() error { f.closed = true; return nil }

// TestCatchUp_ChunkedKeepsProgress: against a released executor whose every connection
// breaks after one answered process/read, a recovery with a 200 ms window still completes:
// each read is capped at 64 KiB (maxBytes, waitMs 0: fields the reference accepts), starts
// after the last delivered seq (never re-reads), its events are delivered before the next
// attempt, and every attempt that brought new events extends the window. The Client gets
// the evicted run as one gap, every retained chunk once in order, the exit and the close.
func TestCatchUp_ChunkedKeepsProgress(t *testing.T) {
	var calls []readCall
	attempts := 0
	s := &sessionConn{
		dial: func(context.Context) (MessageConn, error) {
			attempts++
			return &fakeReleased{reads: 1, log: &calls}, nil
		},
		timeout: 200 * time.Millisecond, log: slog.New(slog.DiscardHandler),
		wsem: make(chan struct{}, 1), cur: nopConn{}, sessionID: "s1",
		inflight: map[string]*inflightReq{}, procs: map[string]*procState{"p": {}},
	}
	var evs []event
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for len(evs) == 0 || evs[len(evs)-1].Method != protocol.MethodProcessClosed {
		m, err := s.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("after %d events and %d attempts: %v", len(evs), attempts, err)
		}
		evs = append(evs, decodeEvents(t, [][]byte{m})...)
	}

	// Wire: capped reads, each after the previous answer's last chunk.
	wantAfter := []uint64{0, 114, 178, 200}
	if len(calls) < len(wantAfter) {
		t.Fatalf("process/reads %+v, want afterSeq %v", calls, wantAfter)
	}
	for i, c := range calls {
		if c.MaxBytes == nil || *c.MaxBytes != catchUpReadBytes || c.WaitMs == nil || *c.WaitMs != 0 {
			t.Errorf("read %d: maxBytes %v waitMs %v, want %d and 0", i, c.MaxBytes, c.WaitMs, catchUpReadBytes)
		}
		if i < len(wantAfter) && c.AfterSeq != wantAfter[i] {
			t.Errorf("read %d: afterSeq %d, want %d", i, c.AfterSeq, wantAfter[i])
		}
	}

	// Delivery: the gap 1–50, chunks 51…200 once in order, exit 201 (code 3), close 202.
	if evs[0].Method != MethodOutputGap || evs[0].Params["seq"] != 1.0 || evs[0].Params["lastSeq"] != 50.0 {
		t.Fatalf("first event %+v, want the gap 1-50", evs[0])
	}
	want := uint64(51)
	for _, e := range evs[1:] {
		seq := uint64(e.Params["seq"].(float64))
		if seq != want {
			t.Fatalf("event %s seq %d, want %d", e.Method, seq, want)
		}
		want++
		switch {
		case seq <= 200 && e.Method != protocol.MethodProcessOutput,
			seq == 201 && (e.Method != protocol.MethodProcessExited || e.Params["exitCode"] != 3.0),
			seq == 202 && e.Method != protocol.MethodProcessClosed:
			t.Fatalf("seq %d: %+v", seq, e)
		}
	}
	if want != 203 {
		t.Fatalf("delivered up to seq %d, want 202", want-1)
	}
	if attempts < 4 {
		t.Errorf("attempts %d, want at least 4 (one read each)", attempts)
	}
	if s.rec != nil {
		t.Errorf("recovery state left behind: %+v", s.rec)
	}
}

// TestCatchUp_NoProgressSpendsTheWindow: attempts that bring nothing new (every read's
// answer is lost) still end the recovery after the window, with an error.
func TestCatchUp_NoProgressSpendsTheWindow(t *testing.T) {
	var calls []readCall
	s := &sessionConn{
		dial: func(context.Context) (MessageConn, error) {
			return &fakeReleased{reads: 0, log: &calls}, nil
		},
		timeout: 300 * time.Millisecond, log: slog.New(slog.DiscardHandler),
		wsem: make(chan struct{}, 1), cur: nopConn{}, sessionID: "s1",
		inflight: map[string]*inflightReq{}, procs: map[string]*procState{"p": {}},
	}
	start := time.Now()
	if _, err := s.ReadMessage(context.Background()); err == nil {
		t.Fatal("ReadMessage: got a message, want the recovery to fail")
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("recovery took %v with a 300 ms window and no progress", el)
	}
	if len(calls) != 0 {
		t.Fatalf("answered reads %+v, want none", calls)
	}
}

// TestCatchUp_LiveEventsOfAFailedAttemptAreKept: an attempt whose stream breaks before any
// read is answered still keeps the process output that arrived live (it is delivered
// first, before the next attempt); the catch-up then skips it, and the Client gets every
// seq exactly once.
func TestCatchUp_LiveEventsOfAFailedAttemptAreKept(t *testing.T) {
	var calls []readCall
	attempts := 0
	live := []byte(`{"method":"process/output","params":{"processId":"p","seq":60,"stream":"stdout","chunk":"eA=="}}`)
	s := &sessionConn{
		dial: func(context.Context) (MessageConn, error) {
			attempts++
			if attempts == 1 {
				return &fakeReleased{reads: 0, live: [][]byte{live}, log: &calls}, nil
			}
			return &fakeReleased{reads: 1, log: &calls}, nil
		},
		timeout: 200 * time.Millisecond, log: slog.New(slog.DiscardHandler),
		wsem: make(chan struct{}, 1), cur: nopConn{}, sessionID: "s1",
		inflight: map[string]*inflightReq{}, procs: map[string]*procState{"p": {}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	seen := map[uint64]int{}
	var first event
	for n := 0; ; n++ {
		m, err := s.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("after %d events and %d attempts: %v", n, attempts, err)
		}
		e := decodeEvents(t, [][]byte{m})[0]
		if n == 0 {
			first = e
		}
		from := uint64(e.Params["seq"].(float64))
		to := from
		if e.Method == MethodOutputGap {
			to = uint64(e.Params["lastSeq"].(float64))
		}
		for seq := from; seq <= to; seq++ {
			seen[seq]++
		}
		if e.Method == protocol.MethodProcessClosed {
			break
		}
	}
	if first.Method != protocol.MethodProcessOutput || first.Params["seq"] != 60.0 || first.Params["chunk"] != "eA==" {
		t.Errorf("first event %+v, want the live output seq 60 kept from the failed attempt", first)
	}
	for seq := uint64(1); seq <= 202; seq++ {
		if seen[seq] != 1 {
			t.Errorf("seq %d delivered %d times, want once", seq, seen[seq])
		}
	}
}

// FuzzCatchUpPartial: the events of a capped read that returned chunks are, for any
// result, in seq order after the watermark, never above its last chunk, and never a close
// (its nextSeq is not the process's).
func FuzzCatchUpPartial(f *testing.F) {
	f.Add(uint64(0), []byte(`{"chunks":[{"seq":51,"stream":"stdout","chunk":"YQ=="},{"seq":53,"stream":"stdout","chunk":"YQ=="}],"nextSeq":54,"exited":true,"exitCode":3,"closed":true}`))
	f.Add(uint64(5), []byte(`{"chunks":[{"seq":3,"stream":"stdout","chunk":"YQ=="},{"seq":9,"stream":"stdout","chunk":"YQ=="}],"nextSeq":18446744073709551615,"exited":true,"closed":true}`))
	f.Fuzz(func(t *testing.T, watermark uint64, result []byte) {
		var r catchUpResult
		if json.Unmarshal(result, &r) != nil || len(r.Chunks) == 0 {
			return
		}
		top := uint64(0)
		for _, c := range r.Chunks {
			top = max(top, c.Seq)
		}
		var last uint64
		for i, m := range catchUpEvents("p", procState{watermark: watermark}, r, true) {
			var e struct {
				Method string `json:"method"`
				Params struct {
					Seq     uint64 `json:"seq"`
					LastSeq uint64 `json:"lastSeq"`
				} `json:"params"`
			}
			if err := json.Unmarshal(m, &e); err != nil {
				t.Fatalf("synthesized message %d is not JSON: %v", i, err)
			}
			if e.Params.Seq <= watermark || (i > 0 && e.Params.Seq < last) || e.Params.Seq > top || e.Params.LastSeq > top {
				t.Fatalf("synthesized %s seq %d-%d after watermark %d / previous %d, top chunk %d", e.Method, e.Params.Seq, e.Params.LastSeq, watermark, last, top)
			}
			if e.Method == protocol.MethodProcessClosed {
				t.Fatalf("a close from a capped read: %s", m)
			}
			last = e.Params.Seq
		}
	})
}
