package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/executor/tunnel"
	"github.com/execlab/executor/harness"
)

// Port tunnel rows (issue 31), ours only (a released executor has no tunnels). Every row
// runs through the side's remote executor (registry + rendezvous + Noise, the relay_stream
// setup), tunnelled by harness.Client.DialTCP to a loopback server in the bench process:
//
//   - tunnel_stream: one connection, the server writes tunnelStreamBytes of a period-251
//     pattern, every byte checked at the client (MiB/s; goal ≥ 150).
//   - tunnel_cpu: the remote executor's utime+stime per GiB of tunnel_stream ÷ the same
//     for relay_cpu's process/output stream, measured back to back (goal ≤ 1.2).
//   - tunnel_parallel16: 16 connections at once, each a 16th of the bytes, every byte
//     checked (aggregate MiB/s; goal ≥ 200).
//   - tunnel_echo_rtt: p50 of 1-byte echo round trips through the tunnel minus the p50 of
//     the same echo over plain loopback (ms; goal ≤ 1).
//   - tunnel_idle_memory: executor heap + stacks per idle tunnelled connection at 1,000
//     connections, in process (KiB; goal ≤ 64).

const (
	tunnelStreamBytes      = 256 << 20
	tunnelStreamBytesQuick = 16 << 20
	tunnelParallel         = 16
	tunnelEchoRounds       = 1000
	tunnelIdleConns        = 1000
	tunnelIdleConnsQuick   = 100
	patternPeriod          = 251 // prime: a misplaced chunk never matches by chance
)

// streamPattern holds the stream pattern for any offset: streamPattern()[off%patternPeriod:]
// has at least 256 KiB. Built on first use, not at package init: the bench package is
// linked into the executor binary, whose init heap is bounded (test/observability
// TestInitHeap, rss_idle).
var streamPattern = sync.OnceValue(func() []byte {
	b := make([]byte, patternPeriod+(256<<10))
	for i := range b {
		b[i] = byte(i % patternPeriod)
	}
	return b
})

// sourceServer serves each connection n bytes of the pattern, then closes it.
func sourceServer(n int64) (port int, stop func(), err error) {
	return tcpServer(func(c net.Conn) {
		var off int64
		for off < n {
			k := min(n-off, 256<<10)
			p := streamPattern()[off%patternPeriod:][:k]
			if _, err := c.Write(p); err != nil {
				return
			}
			off += k
		}
	})
}

// tcpServer runs serve for every connection to a fresh loopback listener; stop closes it
// and waits for every serve.
func tcpServer(serve func(net.Conn)) (int, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, nil, err
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				serve(c)
				c.Close()
			}()
		}
	}()
	stop := func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}
	return ln.Addr().(*net.TCPAddr).Port, stop, nil
}

// readPattern reads r to EOF, checking every byte against the pattern.
func readPattern(r io.Reader, want int64) error {
	buf := make([]byte, 256<<10)
	var off int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if !bytes.Equal(buf[:n], streamPattern()[off%patternPeriod:][:n]) {
				return fmt.Errorf("tunnel: byte mismatch in [%d, %d)", off, off+int64(n))
			}
			off += int64(n)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	if off != want {
		return fmt.Errorf("tunnel: got %d bytes, want %d", off, want)
	}
	return nil
}

func tunnelSize(e *Env) int64 { return quick(e, int64(tunnelStreamBytes), tunnelStreamBytesQuick) }

// tunnelDownload streams n bytes through c conns at once and returns the aggregate MiB/s.
func tunnelDownload(ctx context.Context, c *harness.Client, conns int, n int64) (float64, error) {
	per := n / int64(conns)
	port, stop, err := sourceServer(per)
	if err != nil {
		return 0, err
	}
	defer stop()
	errs := make(chan error, conns)
	start := time.Now()
	for range conns {
		go func() {
			tc, err := c.DialTCP(ctx, "127.0.0.1", port)
			if err != nil {
				errs <- err
				return
			}
			defer tc.Close()
			errs <- readPattern(tc, per)
		}()
	}
	if err := firstError(errs, conns); err != nil {
		return 0, err
	}
	return float64(per*int64(conns)) / (1 << 20) / time.Since(start).Seconds(), nil
}

func measureTunnelStream(ctx context.Context, e *Env, side *Side) (float64, error) {
	sess, err := side.remoteShared(ctx, e)
	if err != nil {
		return 0, err
	}
	return tunnelDownload(ctx, sess.client, 1, tunnelSize(e))
}

func measureTunnelParallel(ctx context.Context, e *Env, side *Side) (float64, error) {
	sess, err := side.remoteShared(ctx, e)
	if err != nil {
		return 0, err
	}
	return tunnelDownload(ctx, sess.client, tunnelParallel, tunnelSize(e))
}

func measureTunnelCPU(ctx context.Context, e *Env, side *Side) (float64, error) {
	sess, err := side.remoteShared(ctx, e)
	if err != nil {
		return 0, err
	}
	size := tunnelSize(e)
	pid := side.remote.cmd.Process.Pid
	tunnel, err := cpuPerGiB(pid, size, func() error {
		_, err := tunnelDownload(ctx, sess.client, 1, size)
		return err
	})
	if err != nil {
		return 0, err
	}
	relay, err := cpuPerGiB(pid, size, func() error {
		_, err := streamZeros(ctx, e, sess, side.processID("tunnelcpu"), size)
		return err
	})
	if err != nil {
		return 0, err
	}
	if relay <= 0 {
		return 0, errors.New("relay stream used no measurable CPU")
	}
	return tunnel / relay, nil
}

// echoP50 is the median of rounds 1-byte round trips on c, in ms.
func echoP50(c net.Conn, rounds int) (float64, error) {
	lat := make([]float64, 0, rounds)
	b := []byte{'x'}
	for range rounds {
		start := time.Now()
		if _, err := c.Write(b); err != nil {
			return 0, err
		}
		if _, err := io.ReadFull(c, b); err != nil {
			return 0, err
		}
		lat = append(lat, float64(time.Since(start))/float64(time.Millisecond))
	}
	sort.Float64s(lat)
	return median(lat), nil
}

func measureTunnelEchoRTT(ctx context.Context, e *Env, side *Side) (float64, error) {
	sess, err := side.remoteShared(ctx, e)
	if err != nil {
		return 0, err
	}
	port, stop, err := tcpServer(func(c net.Conn) { _, _ = io.Copy(c, c) })
	if err != nil {
		return 0, err
	}
	defer stop()
	rounds := tunnelEchoRounds
	if e.Quick {
		rounds /= 10
	}
	plain, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return 0, err
	}
	defer plain.Close()
	base, err := echoP50(plain, rounds)
	if err != nil {
		return 0, err
	}
	tc, err := sess.client.DialTCP(ctx, "127.0.0.1", port)
	if err != nil {
		return 0, err
	}
	defer tc.Close()
	through, err := echoP50(tc, rounds)
	if err != nil {
		return 0, err
	}
	return through - base, nil
}

// measureTunnelIdleMemory is in process, as idle_stream_memory is: a tunnel.Table (what
// the executor keeps per JSON-RPC connection) opens n connections to a loopback listener
// that accepts and holds them (no goroutine per connection on that side), with the
// tunnels' notifications discarded. A sample is the growth of HeapInuse + StackInuse
// (after a forced GC) per connection: both goroutines, the sockets and the table entry.
// The relay under the table costs nothing per tunnel.
func measureTunnelIdleMemory(ctx context.Context, e *Env, _ *Side) (float64, error) {
	n := quick(e, tunnelIdleConns, tunnelIdleConnsQuick)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	var held []net.Conn
	accepted := make(chan struct{})
	go func() { // owner: this function (ln.Close ends it; accepted waits for it)
		defer close(accepted)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	defer func() {
		ln.Close()
		<-accepted
		for _, c := range held {
			c.Close()
		}
	}()
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	// The rows before this one (in this process) end goroutines and free buffers for a
	// while after they return: 100 tunnels of ~4 KiB each (--quick) drowned in that and
	// came out negative once in CI. Let them settle before the baseline too.
	time.Sleep(memorySettle)
	before := inUse()
	tb := tunnel.NewTable(discardNotifier{}, nil)
	defer tb.Close()
	for i := range n {
		res, start := tb.Open(ctx, &protocol.TunnelOpenParams{ConnID: uint64(i + 1), Host: "127.0.0.1", Port: port})
		if start == nil {
			return 0, fmt.Errorf("tunnel open: %s %s", res.Status, res.Message)
		}
		start()
	}
	time.Sleep(memorySettle)
	after := inUse()
	if tb.Len() != n {
		return 0, fmt.Errorf("tunnel: %d of %d connections open", tb.Len(), n)
	}
	return float64(after-before) / float64(n) / 1024, nil
}

// inUse is heap in use + goroutine stacks after forced GCs, in bytes. Two cycles: a
// sync.Pool keeps what it held through the first in its victim cache, which would
// otherwise be freed between the baseline and the measurement.
func inUse() int64 {
	runtime.GC()
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse + m.StackInuse)
}

type discardNotifier struct{}

func (discardNotifier) Notify(context.Context, string, any) error { return nil }

// measureTunnelParallelStreams is tunnel_parallel16 with one relay stream (harness.Dial)
// per connection instead of one shared stream: the alternative the design rejected
// (docs/protocol-extensions.md, "One stream or many"), kept as a row so the choice stays
// measured. The 16 dials are outside the timing.
func measureTunnelParallelStreams(ctx context.Context, e *Env, side *Side) (float64, error) {
	reg, ri, err := side.remoteExecutor(ctx, e)
	if err != nil {
		return 0, err
	}
	n := tunnelSize(e)
	per := n / tunnelParallel
	port, stop, err := sourceServer(per)
	if err != nil {
		return 0, err
	}
	defer stop()
	var conns []*harness.TunnelConn
	var sessions []*session
	defer func() {
		for _, c := range conns {
			c.Close()
		}
		for _, s := range sessions {
			s.close()
		}
	}()
	for range tunnelParallel {
		s, err := openRemoteSession(ctx, reg.svc.URL, ri.env, reg.token)
		if err != nil {
			return 0, err
		}
		sessions = append(sessions, s)
		tc, err := s.client.DialTCP(ctx, "127.0.0.1", port)
		if err != nil {
			return 0, err
		}
		conns = append(conns, tc)
	}
	errs := make(chan error, len(conns))
	start := time.Now()
	for _, tc := range conns {
		go func() { errs <- readPattern(tc, per) }()
	}
	if err := firstError(errs, len(conns)); err != nil {
		return 0, err
	}
	return float64(per*tunnelParallel) / (1 << 20) / time.Since(start).Seconds(), nil
}

// firstError receives n results from errs (every sender's, so none is left blocked) and
// returns the first error among them.
func firstError(errs <-chan error, n int) error {
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}
