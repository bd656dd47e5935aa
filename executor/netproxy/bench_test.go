package netproxy_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/execlab/executor/executor/netproxy"
)

// BenchmarkStartClose: the cost a networkProxy adds to process/start and its end (two
// listeners bound, served and closed).
func BenchmarkStartClose(b *testing.B) {
	p := policy(b, "full", false, `"domains":{"localhost":"allow"}`)
	for b.Loop() {
		px, err := netproxy.Start(p, nil)
		if err != nil {
			b.Fatal(err)
		}
		px.Close()
	}
}

// BenchmarkConnectTunnel: bytes per second through an established CONNECT tunnel to a
// loopback sink.
func BenchmarkConnectTunnel(b *testing.B) {
	sink, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	go func() {
		for {
			c, err := sink.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, c); c.Close() }()
		}
	}()
	p := policy(b, "full", false, `"domains":{"localhost":"allow"}`)
	px, err := netproxy.Start(p, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer px.Close()
	c, err := net.Dial("tcp", px.HTTPAddr())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	_, port, _ := net.SplitHostPort(sink.Addr().String())
	fmt.Fprintf(c, "CONNECT localhost:%s HTTP/1.1\r\n\r\n", port)
	br := bufio.NewReader(c)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		if line == "\r\n" {
			break
		}
	}
	buf := make([]byte, 64<<10)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		if _, err := c.Write(buf); err != nil {
			b.Fatal(err)
		}
	}
}
