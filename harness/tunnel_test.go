package harness_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/execlab/executor/harness"
)

// listenTCP starts a loopback listener whose connections are served by fn, each on its
// own goroutine; all are waited for at cleanup.
func listenTCP(t *testing.T, fn func(net.Conn)) (*net.TCPListener, int) {
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	wait := serveConns(ln, fn)
	t.Cleanup(func() { ln.Close(); wait() })
	return ln, ln.Addr().(*net.TCPAddr).Port
}

// serveConns serves every connection ln accepts with fn, each on its own goroutine that
// closes it after fn, until Accept fails (ln is closed); wait returns once the accept
// loop and every fn have ended.
func serveConns(ln net.Listener, fn func(net.Conn)) (wait func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				fn(c)
			}()
		}
	}()
	return wg.Wait
}

// echoHalfClose echoes until EOF, then half-closes: a protocol that needs FIN both ways.
func echoHalfClose(c net.Conn) {
	_, _ = io.Copy(c, c)
	_ = c.(*net.TCPConn).CloseWrite()
	_, _ = io.Copy(io.Discard, c)
}

func TestDialTCP_PerServer(t *testing.T) {
	forEachServer(t, func(t *testing.T, url string) {
		c, _ := dial(t, url, true)
		_, port := listenTCP(t, echoHalfClose)
		conn, err := c.DialTCP(testCtx(t), "127.0.0.1", port)
		if !c.Capabilities().TCPTunnel {
			// A released executor: refused locally, nothing sent.
			if !errors.Is(err, harness.ErrNotSupported) {
				t.Fatalf("DialTCP against a released executor: got %v, want ErrNotSupported", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		msg := []byte("hello through the tunnel")
		if _, err := conn.Write(msg); err != nil {
			t.Fatal(err)
		}
		if err := conn.CloseWrite(); err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(conn)
		if err != nil {
			t.Fatalf("reading echo: %v", err)
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("echo: got %q, want %q", got, msg)
		}
	})
}

// dialOurs starts our executor and returns an initialized client.
func dialOurs(t *testing.T) *harness.Client {
	t.Helper()
	c, _ := dial(t, startServer(t, servers[0]), true)
	if !c.Capabilities().TCPTunnel {
		t.Fatal("our executor does not advertise tcpTunnel")
	}
	return c
}

func TestDialTCP_RefusedDestinationNamesFlag(t *testing.T) {
	c := dialOurs(t)
	_, err := c.DialTCP(testCtx(t), "192.0.2.1", 80)
	if !errors.Is(err, harness.ErrTunnelRefused) || !strings.Contains(err.Error(), "--tunnel-allow") {
		t.Fatalf("got %v, want ErrTunnelRefused naming --tunnel-allow", err)
	}
}

func TestDialTCP_BulkBothWaysVerified(t *testing.T) {
	c := dialOurs(t)
	const size = 24 << 20
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	payload := make([]byte, size)
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16)})
	_, _ = r.Read(payload)
	want := sha256.Sum256(payload)
	// The destination hashes what it gets, then sends the payload back.
	var gotAtDest atomic.Value
	_, port := listenTCP(t, func(nc net.Conn) {
		h := sha256.New()
		_, _ = io.Copy(h, nc)
		gotAtDest.Store(h.Sum(nil))
		_, _ = nc.Write(payload)
	})
	conn, err := c.DialTCP(testCtx(t), "127.0.0.1", port)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	errc := make(chan error, 1)
	go func() {
		_, err := conn.Write(payload)
		if err == nil {
			err = conn.CloseWrite()
		}
		errc <- err
	}()
	h := sha256.New()
	n, err := io.Copy(h, conn)
	if err != nil {
		t.Fatalf("reading after %d bytes: %v", n, err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if n != size || !bytes.Equal(h.Sum(nil), want[:]) {
		t.Fatalf("received %d bytes, hash mismatch=%v", n, !bytes.Equal(h.Sum(nil), want[:]))
	}
	if g, _ := gotAtDest.Load().([]byte); !bytes.Equal(g, want[:]) {
		t.Fatal("destination received different bytes")
	}
}

// A reader that does not read stops the destination's writes: the executor holds at
// most the window, plus what the kernel buffers on both sockets.
func TestDialTCP_SlowReaderBackPressure(t *testing.T) {
	c := dialOurs(t)
	const limit = 24 << 20 // window 1 MiB + loopback socket buffers (≤ ~6 MiB each way) + slack
	var written atomic.Int64
	stop := make(chan struct{})
	_, port := listenTCP(t, func(nc net.Conn) {
		buf := make([]byte, 64<<10)
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = nc.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
			n, err := nc.Write(buf)
			written.Add(int64(n))
			if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				return
			}
		}
	})
	conn, err := c.DialTCP(testCtx(t), "127.0.0.1", port)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Wait until the writer has stalled: no progress across 300 ms (bounded: 10 s).
	last := int64(-1)
	for i := 0; i < 100; i++ {
		time.Sleep(300 * time.Millisecond)
		w := written.Load()
		if w == last {
			break
		}
		last = w
	}
	if w := written.Load(); w > limit || w == 0 {
		t.Fatalf("destination wrote %d bytes with nobody reading; want 0 < n ≤ %d", w, limit)
	}
	// Reading releases it.
	before := written.Load()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.CopyN(io.Discard, conn, before+(4<<20)); err != nil {
		t.Fatalf("reading after the stall: %v", err)
	}
	close(stop)
}

func TestDialTCP_DeadlinesAndClose(t *testing.T) {
	c := dialOurs(t)
	_, port := listenTCP(t, func(nc net.Conn) { _, _ = io.Copy(io.Discard, nc) }) // never writes
	conn, err := c.DialTCP(testCtx(t), "127.0.0.1", port)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := conn.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	var ne net.Error
	_ = conn.SetReadDeadline(time.Now().Add(-time.Second))
	if _, err := conn.Read(make([]byte, 1)); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("read with a past deadline: %v, want a timeout net.Error", err)
	}
	_ = conn.SetReadDeadline(time.Time{})
	done := make(chan error, 1)
	go func() { _, err := conn.Read(make([]byte, 1)); done <- err }()
	time.Sleep(20 * time.Millisecond)
	conn.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read across Close: %v, want net.ErrClosed", err)
	}
	if _, err := conn.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after Close: %v, want net.ErrClosed", err)
	}
}

// The connection dies with the Client's connection: reads fail with ErrTunnelReset.
func TestDialTCP_ResetWhenClientCloses(t *testing.T) {
	c := dialOurs(t)
	_, port := listenTCP(t, func(nc net.Conn) { _, _ = io.Copy(io.Discard, nc) })
	conn, err := c.DialTCP(testCtx(t), "127.0.0.1", port)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := conn.Read(make([]byte, 1)); done <- err }()
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, harness.ErrTunnelReset) {
			t.Fatalf("read after the Client closed: %v, want ErrTunnelReset", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("read still blocked 10 s after the Client closed")
	}
}

// A destination that does not read stops the client's writes: Write blocks once the
// executor's window and the kernel's buffers are full, and a write deadline ends it.
func TestDialTCP_SlowDestinationBackPressure(t *testing.T) {
	c := dialOurs(t)
	release := make(chan struct{})
	var got atomic.Int64
	_, port := listenTCP(t, func(nc net.Conn) {
		<-release
		n, _ := io.Copy(io.Discard, nc)
		got.Store(n)
	})
	conn, err := c.DialTCP(testCtx(t), "127.0.0.1", port)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const limit = 32 << 20 // window 2 MiB + loopback socket buffers + slack
	_ = conn.SetWriteDeadline(time.Now().Add(3 * time.Second))
	chunk := make([]byte, 256<<10)
	var sent int64
	for sent <= limit {
		n, err := conn.Write(chunk)
		sent += int64(n)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if sent > limit {
		t.Fatalf("wrote %d bytes to a destination that reads nothing; want ≤ %d", sent, limit)
	}
	close(release)
	_ = conn.SetWriteDeadline(time.Time{})
	if err := conn.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.Copy(io.Discard, conn); err != nil {
		t.Fatalf("waiting for the destination's FIN: %v", err)
	}
	if got.Load() != sent {
		t.Fatalf("destination received %d bytes, want %d", got.Load(), sent)
	}
}
