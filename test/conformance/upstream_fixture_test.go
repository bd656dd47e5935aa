package conformance_test

import (
	"bufio"
	"io"
	"net"
	"strings"
	"sync"
)

// tcpUpstreamFixture stands in for the HTTP CONNECT proxy an executor started with
// `--tcp-upstream-proxy HOST:PORT` chains its SOCKS5 TCP through (scenarios with
// "tcpUpstreamProxy": true). It answers CONNECTs to hosts named refuse.* with 403 and
// connects every other host:port to 127.0.0.1:port, so a name that resolves nowhere
// (origin.test) reaches the HTTP fixture only through it.
type tcpUpstreamFixture struct {
	ln net.Listener
	wg sync.WaitGroup
}

// tcpUpstreamAddr is the running fixture's address (set by TestMain).
var tcpUpstreamAddr string

func newTCPUpstreamFixture() (*tcpUpstreamFixture, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &tcpUpstreamFixture{ln: ln}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.wg.Add(1)
			go func() { defer f.wg.Done(); serveConnect(c) }()
		}
	}()
	return f, nil
}

// Close stops accepting and waits for the open tunnels to end.
func (f *tcpUpstreamFixture) Close() {
	f.ln.Close()
	f.wg.Wait()
}

// serveConnect serves one CONNECT.
func serveConnect(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil {
		return
	}
	for { // the rest of the head
		l, err := br.ReadString('\n')
		if err != nil {
			return
		}
		if l == "\r\n" {
			break
		}
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "CONNECT" {
		io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\ncontent-length: 0\r\n\r\n")
		return
	}
	host, port, err := net.SplitHostPort(f[1])
	if err != nil || strings.HasPrefix(host, "refuse.") {
		io.WriteString(c, "HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n")
		return
	}
	origin, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n")
		return
	}
	defer origin.Close()
	io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	done := make(chan struct{})
	go func() { // owner: this function, which waits for it
		defer close(done)
		_, _ = io.Copy(origin, br)
		origin.(*net.TCPConn).CloseWrite()
	}()
	_, _ = io.Copy(c, origin)
	c.Close()
	<-done
}
