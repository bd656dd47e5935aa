package harness

import (
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// FuzzTunnelHandle feeds the read loop's tunnel decoder arbitrary valid JSON params (what
// the Client's scanner passes) for an open connection: it must never panic or block, and must take every tunnel method.
func FuzzTunnelHandle(f *testing.F) {
	for _, s := range []string{`{"connId":1,"data":"aGk="}`, `{"connId":1,"bytes":5}`, `{"connId":1}`, `{"connId":1,"reason":"x"}`,
		`{"data":"aGk=","connId":1}`, `{"connId":1,"data":"a\u0047k="}`, `{}`, `null`, `[1]`,
		`{"listenerId":1,"connId":4503599627370496,"peer":"127.0.0.1:5","window":2097152}`, `{"listenerId":1,"connId":1,"window":1}`, `{"listenerId":2,"connId":9,"window":1}`} {
		for _, m := range []string{protocol.MethodTunnelData, protocol.MethodTunnelAck, protocol.MethodTunnelEOF, protocol.MethodTunnelClose, protocol.MethodTunnelAccepted} {
			f.Add(m, s)
		}
	}
	f.Fuzz(func(t *testing.T, method, params string) {
		if jsonwire.Validate([]byte(params)) != nil {
			return // handle takes params of a message the Client's scanner passed
		}
		var tt tunnelTable
		tc := newTunnelConn(nil, 1, "x:1")
		tt.add(tc)
		l := &TunnelListener{id: 1, ready: make(chan struct{}, 1)}
		tt.addListener(l)
		took := tt.handle(nil, method, []byte(params))
		switch method {
		case protocol.MethodTunnelData, protocol.MethodTunnelAck, protocol.MethodTunnelEOF, protocol.MethodTunnelClose, protocol.MethodTunnelAccepted:
			if !took {
				t.Fatalf("%s not taken", method)
			}
		default:
			if took {
				t.Fatalf("%s taken", method)
			}
		}
		l.mu.Lock()
		for _, a := range l.queue {
			if tt.get(a.id) != a {
				t.Fatalf("accepted conn %d not registered", a.id)
			}
		}
		l.mu.Unlock()
		tc.mu.Lock()
		defer tc.mu.Unlock()
		if tc.inBytes > TunnelWindow {
			t.Fatalf("buffered %d bytes", tc.inBytes)
		}
	})
}
