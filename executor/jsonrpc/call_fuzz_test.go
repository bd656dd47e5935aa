package jsonrpc

import (
	"bytes"
	"errors"
	"testing"

	"github.com/execlab/executor/jsonwire"
)

// FuzzRouteReply feeds arbitrary inbound messages through the reply path (Parse, then
// calls.route) of a connection that issued ids 1…3 with 1 and 3 pending and 2 already
// answered. Invariants: route accepts exactly the integer ids 1…3 (anything else closes
// the connection); an accepted pending id receives the reply's own result (a copy) or
// error; an accepted answered id is counted late; nothing panics. Seeds:
// testdata/fuzz/FuzzRouteReply.
func FuzzRouteReply(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"result":{"decision":{"type":"allow"}}}`,
		`{"id":3,"error":{"code":-32000,"message":"x","data":[1]}}`,
		`{"id":2,"result":{}}`,
		`{"id":"1","result":{}}`,
		`{"id":0,"result":null}`,
		`{"id":-0,"result":1}`,
		`{"id":4,"result":{}}`,
		`{"id":9223372036854775807,"result":{}}`,
		`{"id":1.0,"result":{}}`,
		`{"result":{},"id":3}`,
		`{"error":{"code":1,"message":""}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil || (m.Kind != KindResponse && m.Kind != KindError) {
			return
		}
		var cs calls
		chans := map[int64]chan callResult{}
		for range 3 {
			id, ch, err := cs.start()
			if err != nil {
				t.Fatal(err)
			}
			chans[id] = ch
		}
		if !cs.forget(2) {
			t.Fatal("forget(2) found nothing")
		}
		raw := bytes.Clone(m.Result)
		ok := cs.route(m)
		id, isInt := issuedID(m.ID)
		if want := isInt && id >= 1 && id <= 3; ok != want {
			t.Fatalf("route(%s) = %v, want %v", m.ID, ok, want)
		}
		if !ok {
			return
		}
		if id == 2 {
			if cs.stats.Late != 1 {
				t.Fatalf("late reply to 2 not counted: %+v", cs.stats)
			}
			return
		}
		r := <-chans[id]
		if m.Kind == KindError {
			var e *jsonwire.Error
			if !errors.As(r.err, &e) || e != m.Error {
				t.Fatalf("error reply delivered as %v, want %v", r.err, m.Error)
			}
			return
		}
		if r.err != nil || !bytes.Equal(r.result, raw) {
			t.Fatalf("result %s, %v; want %s", r.result, r.err, raw)
		}
		if len(data) > 0 && len(r.result) > 0 {
			data[0] ^= 0xff // the delivered result must not alias the read buffer
			if !bytes.Equal(r.result, raw) {
				t.Fatal("delivered result aliases the message buffer")
			}
		}
		if _, still := cs.pending[id]; still {
			t.Fatalf("id %d still pending after its reply", id)
		}
	})
}
