package serve

import (
	"bufio"
	"net"
	"net/http"
)

// bufferedHijack wraps the upgrade's ResponseWriter so that the hijacked connection,
// which coder/websocket writes every frame through, gets a WriteBufferBytes buffer instead
// of net/http's 4 KiB one (issue 16). coder/websocket buffers the frame header and then
// the payload: with 4 KiB, every message larger than that took two write syscalls (fill
// and flush, then the rest), and a stdout stream's messages are mostly 4–8 KiB (one pipe
// read each). With the larger buffer such a message is one write.
type bufferedHijack struct{ http.ResponseWriter }

// Hijack takes over the connection through the wrapped writer and replaces its empty
// write buffer. A buffer that already holds bytes is kept as it is (net/http hands over a
// fresh one, so this does not happen in practice).
func (b bufferedHijack) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, brw, err := http.NewResponseController(b.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if brw.Writer.Buffered() == 0 {
		brw.Writer = bufio.NewWriterSize(c, WriteBufferBytes)
	}
	return c, brw, nil
}
