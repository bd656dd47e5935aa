package interop_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
)

// cutProxy forwards every TCP connection to target and can cut them all at once, then
// refuse new ones for an outage: a rendezvous socket flap on both sides (docs/
// reliability.md).
type cutProxy struct {
	ln net.Listener

	mu     sync.Mutex // guards target, conns and until
	target string     // set once the registry behind it listens (setTarget)
	conns  map[net.Conn]struct{}
	until  time.Time // connections accepted before this are closed at once
	wg     sync.WaitGroup
}

func startCutProxy(t testing.TB) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.cut(0)
		p.wg.Wait()
	})
	return p
}

func (p *cutProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refuse := time.Now().Before(p.until)
		target := p.target
		p.mu.Unlock()
		if refuse {
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[up] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

// setTarget points the proxy at addr (the accept loop is already running).
func (p *cutProxy) setTarget(addr string) {
	p.mu.Lock()
	p.target = addr
	p.mu.Unlock()
}

func (p *cutProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// cut closes every open connection and refuses new ones for outage.
func (p *cutProxy) cut(outage time.Duration) {
	p.mu.Lock()
	p.until = time.Now().Add(outage)
	conns := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0) // RST, as a dropped NAT mapping or a killed process
		}
		c.Close()
	}
}

// cutAfter is an io.Writer that keeps everything and runs cut once n bytes have passed.
type cutAfter struct {
	buf  bytes.Buffer
	n    int
	once sync.Once
	cut  func()
}

func (w *cutAfter) Write(b []byte) (int, error) {
	w.buf.Write(b)
	if w.buf.Len() >= w.n {
		w.once.Do(func() { go w.cut() })
	}
	return len(b), nil
}

// TestReliability_CutMidStream: `executor exec` streams a 32 MiB file through our registry
// and rendezvous; after 4 MiB every connection (executor and harness side) is cut and
// refused for 1 s. With our executor the output is complete and identical (lossless:
// acknowledged output, replayed from the last ack). With a released executor, which
// keeps only its last 1 MiB, exec must not hang: it completes, or reports each lost run on
// stderr and delivers the rest in order (pieces of the file, in file order, no more pieces
// than reported runs plus one) and exits with cat's 0 — or, when the released executor
// evicted the exit event too (a cut under load can cost two runs and the exit), with 255
// and "exit status was lost", the same end TestFaults accepts.
func TestReliability_CutMidStream(t *testing.T) {
	const size = 32 << 20
	data := make([]byte, size)
	_, _ = rand.Read(data)
	path := filepath.Join(t.TempDir(), "data.bin")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	forEachExecutor(t, func(t *testing.T, ref *refbin.Release) {
		proxy := startCutProxy(t)
		reg := startOurRegistryBehind(t, func(addr string) string {
			proxy.setTarget(addr)
			return "http://" + proxy.ln.Addr().String()
		})
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
		defer cancel()
		startOnlineExecutor(t, ctx, ref, reg, "env-cut")
		out := &cutAfter{n: 4 << 20, cut: func() { proxy.cut(time.Second) }}
		stderr, code := runExec(t, ctx, reg, "env-cut", out, "cat", path)
		got := out.buf.Bytes()
		gaps := strings.Count(stderr, "were lost while disconnected")
		lost := gaps > 0
		exitLost := strings.Contains(stderr, "exit status was lost")
		t.Logf("%d of %d bytes, exit %d, stderr %q", len(got), size, code, stderr)
		if code != 0 && (ref == nil || !lost || code != 255 || !exitLost) {
			t.Fatalf("exit %d, want 0 (cat's status, delivered in order), or 255 with the exit status reported lost after a reported gap (released executors only)", code)
		}
		if !strings.Contains(stderr, "reconnected") {
			t.Errorf("stderr %q: want the reconnect reported (was the connection cut?)", stderr)
		}
		if ref == nil {
			if lost || !bytes.Equal(got, data) {
				t.Fatalf("ours: got %d bytes (equal %v), gap reported %v; want all %d bytes, no gap", len(got), bytes.Equal(got, data), lost, size)
			}
			return
		}
		if bytes.Equal(got, data) {
			return // nothing was evicted before the catch-up
		}
		if !lost {
			t.Fatalf("%d of %d bytes and no gap reported", len(got), size)
		}
		// Pieces of the file in file order: each run in between was evicted and reported.
		pieces, ok := inOrderPieces(got, data)
		if !ok {
			t.Fatalf("output (%d bytes) is not made of pieces of the file in file order", len(got))
		}
		if pieces > gaps+1 {
			t.Fatalf("output has %d discontinuities, but exec reported %d lost runs", pieces-1, gaps)
		}
	})
}

// inOrderPieces splits got into maximal runs that each equal some part of data, taken in
// increasing order of data offset, the first one at offset 0. It reports how many runs
// there are, and false when got cannot be split so. data is random, so a 64-byte probe
// occurs in it only where it was copied from.
func inOrderPieces(got, data []byte) (int, bool) {
	i, j, pieces := 0, 0, 0
	for i < len(got) {
		probe := got[i:min(i+64, len(got))]
		k := bytes.Index(data[j:], probe)
		if k < 0 || (pieces == 0 && k != 0) {
			return pieces, false
		}
		j += k
		pieces++
		for i < len(got) && j < len(data) && got[i] == data[j] {
			i++
			j++
		}
	}
	return pieces, true
}

// stallAfter is an io.Writer that blocks once, for d, after n bytes: a reader that stops
// reading (`exec … | (sleep 7; cat)`).
type stallAfter struct {
	buf     bytes.Buffer
	n       int
	d       time.Duration
	stalled bool
}

func (w *stallAfter) Write(b []byte) (int, error) {
	if !w.stalled && w.buf.Len() >= w.n {
		w.stalled = true
		time.Sleep(w.d)
	}
	return w.buf.Write(b)
}

// TestReliability_SlowReaderIsFlowControlled: our exec stops reading for 7 s, longer than
// the rendezvous waits for a full harness socket queue before closing it (5 s,
// registry/rendezvous SlowConsumerTimeout). With our executor the window of
// unacknowledged output (docs/reliability.md §4) stops the executor's sending instead: no
// disconnect, every byte arrives.
func TestReliability_SlowReaderIsFlowControlled(t *testing.T) {
	const size = 16 << 20
	data := make([]byte, size)
	_, _ = rand.Read(data)
	path := filepath.Join(t.TempDir(), "data.bin")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	reg := startOurRegistry(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	startOnlineExecutor(t, ctx, nil, reg, "env-slow")
	out := &stallAfter{n: 2 << 20, d: 7 * time.Second}
	stderr, code := runExec(t, ctx, reg, "env-slow", out, "cat", path)
	if code != 0 || !bytes.Equal(out.buf.Bytes(), data) || stderr != "" {
		t.Fatalf("got %d of %d bytes (equal %v), exit %d, stderr %q; want all, exit 0, nothing on stderr (no disconnect)",
			out.buf.Len(), size, bytes.Equal(out.buf.Bytes(), data), code, stderr)
	}
}

// TestInOrderPieces checks the helper TestReliability_CutMidStream judges released
// executors' gaps with: whole, one gap, two gaps, a truncated tail; reordered, foreign or
// not starting at the file's start is refused.
func TestInOrderPieces(t *testing.T) {
	data := make([]byte, 1<<16)
	_, _ = rand.Read(data)
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	for _, c := range []struct {
		name   string
		got    []byte
		pieces int
		ok     bool
	}{
		{"whole", data, 1, true},
		{"one gap", cat(data[:1000], data[5000:]), 2, true},
		{"two gaps", cat(data[:1000], data[5000:9000], data[20000:]), 3, true},
		{"two gaps, tail lost", cat(data[:1000], data[5000:9000], data[20000:30000]), 3, true},
		{"empty", nil, 0, true},
		{"reordered", cat(data[:1000], data[20000:30000], data[5000:9000]), 0, false},
		{"not from the start", data[100:], 0, false},
		{"foreign bytes", cat(data[:1000], bytes.Repeat([]byte{0}, 100), data[5000:]), 0, false},
	} {
		pieces, ok := inOrderPieces(c.got, data)
		if ok != c.ok || (ok && pieces != c.pieces) {
			t.Errorf("%s: got %d pieces, ok %v; want %d, %v", c.name, pieces, ok, c.pieces, c.ok)
		}
	}
}
