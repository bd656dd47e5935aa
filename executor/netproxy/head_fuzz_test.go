package netproxy_test

import (
	"bytes"
	"net"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/netproxy"
)

// FuzzReadHead: the HTTP request-head parser never panics, and a head it accepts is
// re-emitted as lines without bare CR, NUL or LF inside, ending in exactly one blank
// line (no header injection towards the upstream).
func FuzzReadHead(f *testing.F) {
	f.Add([]byte("GET http://localhost:1/x?y HTTP/1.1\r\nHost: localhost:1\r\nConnection: keep-alive, X-Drop\r\nX-Drop: 1\r\nX-Keep: 2\r\n\r\n"))
	f.Add([]byte("POST / HTTP/1.1\r\nHost: [::1]:8080\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"))
	f.Add([]byte("CONNECT localhost:443 HTTP/1.1\r\n\r\n"))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n"))
	f.Add([]byte("garbage\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		head, _, err := netproxy.ReadHeadForTest(b)
		if err != nil {
			return
		}
		if !strings.HasSuffix(head, "\r\n\r\n") || strings.Count(head, "\r\n\r\n") != 1 {
			t.Fatalf("forwarded head %q does not end in exactly one blank line", head)
		}
		for _, line := range strings.Split(strings.TrimSuffix(head, "\r\n\r\n"), "\r\n") {
			if strings.ContainsAny(line, "\r\n\x00") {
				t.Fatalf("forwarded line %q carries a line break or NUL", line)
			}
		}
	})
}

// FuzzSocksAddr: the SOCKS5 address parser never panics and never reads past what the
// address type announces.
func FuzzSocksAddr(f *testing.F) {
	f.Add(byte(1), []byte{127, 0, 0, 1, 0, 80})
	f.Add(byte(3), append([]byte{9}, []byte("localhost\x01\xbb")...))
	f.Add(byte(4), bytes.Repeat([]byte{0}, 18))
	f.Add(byte(9), []byte{})
	f.Fuzz(func(t *testing.T, atyp byte, b []byte) {
		a, c := net.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer c.Close()
			_, _ = c.Write(b)
		}()
		_, _, _ = netproxy.ReadSocksAddrForTest(a, atyp)
		a.Close() // releases a writer blocked on bytes the parser did not want
		<-done
	})
}
