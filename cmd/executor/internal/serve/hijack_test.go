package serve_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/execlab/executor/cmd/executor/internal/serve"
)

// TestBufferedHijack_WriteBuffer: the hijacked connection the WebSocket library writes
// through has a WriteBufferBytes buffer, and bytes written through it reach the client.
func TestBufferedHijack_WriteBuffer(t *testing.T) {
	sizes := make(chan int, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, brw, err := serve.BufferedHijackForTest(w).Hijack()
		if err != nil {
			sizes <- -1
			return
		}
		defer c.Close()
		sizes <- brw.Writer.Size()
		_, _ = brw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
		_ = brw.Flush()
	}))
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got := <-sizes; got != serve.WriteBufferBytes {
		t.Errorf("got a %d-byte write buffer, want %d", got, serve.WriteBufferBytes)
	}
	if string(body) != "hello" {
		t.Errorf("got body %q, want hello", body)
	}
}
