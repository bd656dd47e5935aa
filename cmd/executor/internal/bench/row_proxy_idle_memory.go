package bench

import (
	"context"
	"fmt"
	"net"
	"time"
)

// proxy_idle_memory: what an idle proxied connection costs the executor (issue 29). One
// sample starts a fresh executor (as http_stream_rss: a long-lived one may hold memory
// freed by earlier rows), one initialized connection and a proxy holder (row_proxy.go),
// reads VmRSS, opens proxyIdleTunnels (250) CONNECT tunnels through the proxy to the greeter
// (each established end to end: the greeter's byte has arrived, openTunnel), waits
// memorySettle, reads VmRSS again, and reports the growth per tunnel in KiB. The tunnels
// are held by the bench process, not the executor: the figure is the proxy's side only
// (its two sockets, routines and buffers per tunnel). Both executors are measured the same
// way. Goal: ours ≤ 32 KiB; the reference is printed beside it.

func measureProxyIdleMemory(ctx context.Context, e *Env, side *Side) (float64, error) {
	g, err := e.greeterFor()
	if err != nil {
		return 0, err
	}
	inst, sess, err := startConnected(ctx, side.Target)
	if err != nil {
		return 0, err
	}
	defer inst.stop()
	defer sess.close()
	h, err := holdProxy(ctx, side, sess)
	if err != nil {
		return 0, err
	}
	n := quick(e, proxyIdleTunnels, proxyIdleTunnelsQuick)
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	pid := inst.pid()
	// One tunnel first, closed again, so that what every proxy sets up once for its first
	// connection (routines, pools, the resolver) is not counted per tunnel.
	c, err := openTunnel(ctx, h.addr, g.port)
	if err != nil {
		_ = h.stop()
		return 0, err
	}
	c.Close()
	time.Sleep(memorySettle)
	before, err := procStatusKiB(pid, "VmRSS")
	if err != nil {
		_ = h.stop()
		return 0, err
	}
	for range n {
		c, err := openTunnel(ctx, h.addr, g.port)
		if err != nil {
			_ = h.stop()
			return 0, fmt.Errorf("tunnel %d of %d: %w", len(conns)+1, n, err)
		}
		conns = append(conns, c)
	}
	time.Sleep(memorySettle)
	after, err := procStatusKiB(pid, "VmRSS")
	if err != nil {
		_ = h.stop()
		return 0, err
	}
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	if err := h.stop(); err != nil {
		return 0, err
	}
	return float64(max(after-before, 0)) / float64(n), nil
}
