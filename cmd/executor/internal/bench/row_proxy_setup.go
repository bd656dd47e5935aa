package bench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"time"
)

// proxy_setup: how long a proxied connection takes to come up (issue 29). One sample
// starts a proxy holder (row_proxy.go: a child whose only job is to keep its networkProxy
// open) and then, from the bench, opens proxySetupsPerSample tunnels through its HTTP
// listener one after another, each timed from the dial of the proxy to the first byte the
// upstream sent through the tunnel: dial, `CONNECT localhost:PORT HTTP/1.1`, the proxy's
// policy decision, its 200 reply (both proxies answer before they connect upstream),
// its upstream connect to the greeter (row_proxy.go, which writes one byte on accept),
// and that byte relayed. The status must be 200 and the byte the greeter's. The sample
// is the median in ms; the holder's start is not timed. Goal: ≤ 0.5× the reference.

func measureProxySetup(ctx context.Context, e *Env, side *Side) (float64, error) {
	sess, err := side.shared(ctx)
	if err != nil {
		return 0, err
	}
	g, err := e.greeterFor()
	if err != nil {
		return 0, err
	}
	h, err := holdProxy(ctx, side, sess)
	if err != nil {
		return 0, err
	}
	n := quick(e, proxySetupsPerSample, proxySetupsPerSampleQuick)
	lat := make([]float64, 0, n)
	for range n {
		start := time.Now()
		c, err := openTunnel(ctx, h.addr, g.port)
		if err != nil {
			_ = h.stop()
			return 0, err
		}
		lat = append(lat, float64(time.Since(start))/float64(time.Millisecond))
		c.Close()
	}
	if err := h.stop(); err != nil {
		return 0, err
	}
	return summarize(lat).Median, nil
}

// openTunnel dials the proxy at addr, asks it for a tunnel to localhost:port (the
// greeter), and returns once the greeter's byte has arrived through it.
func openTunnel(ctx context.Context, addr, port string) (net.Conn, error) {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	c, err := d.DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dialling the proxy: %w", err)
	}
	if dl, ok := dctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	target := "localhost:" + port
	if _, err := c.Write([]byte("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n")); err != nil {
		c.Close()
		return nil, fmt.Errorf("sending CONNECT: %w", err)
	}
	// Byte by byte up to the greeter's byte, so that nothing is left in a reader the
	// caller would have to keep.
	br := bufio.NewReaderSize(c, 16) // the smallest size bufio allows
	status, err := br.ReadString('\n')
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("reading the CONNECT reply: %w", err)
	}
	if !strings.HasPrefix(status, "HTTP/1.1 200 ") && !strings.HasPrefix(status, "HTTP/1.0 200 ") {
		c.Close()
		return nil, fmt.Errorf("CONNECT %s: %q, want 200", target, strings.TrimSpace(status))
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("reading the CONNECT reply: %w", err)
		}
		if line == "\r\n" || line == "\n" {
			break
		}
	}
	b, err := br.ReadByte()
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("waiting for the upstream's first byte: %w", err)
	}
	if b != 'g' || br.Buffered() != 0 {
		c.Close()
		return nil, fmt.Errorf("%w: tunnel delivered %q (+%d bytes), want the greeter's byte", errDataLoss, b, br.Buffered())
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}
