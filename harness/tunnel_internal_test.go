package harness

import (
	"testing"

	"github.com/execlab/executor/executor/protocol"
)

// FuzzTunnelHandle feeds the read loop's tunnel decoder arbitrary params for an open
// connection: it must never panic or block, and must take every tunnel method.
func FuzzTunnelHandle(f *testing.F) {
	for _, s := range []string{`{"connId":1,"data":"aGk="}`, `{"connId":1,"bytes":5}`, `{"connId":1}`, `{"connId":1,"reason":"x"}`,
		`{"data":"aGk=","connId":1}`, `{"connId":1,"data":"a\u0047k="}`, `{}`, `null`, `[1]`} {
		for _, m := range []string{protocol.MethodTunnelData, protocol.MethodTunnelAck, protocol.MethodTunnelEOF, protocol.MethodTunnelClose} {
			f.Add(m, s)
		}
	}
	f.Fuzz(func(t *testing.T, method, params string) {
		var tt tunnelTable
		tc := newTunnelConn(nil, 1, "x:1")
		tt.add(tc)
		took := tt.handle(method, []byte(params))
		switch method {
		case protocol.MethodTunnelData, protocol.MethodTunnelAck, protocol.MethodTunnelEOF, protocol.MethodTunnelClose:
			if !took {
				t.Fatalf("%s not taken", method)
			}
		default:
			if took {
				t.Fatalf("%s taken", method)
			}
		}
		tc.mu.Lock()
		defer tc.mu.Unlock()
		if tc.inBytes > TunnelWindow {
			t.Fatalf("buffered %d bytes", tc.inBytes)
		}
	})
}
