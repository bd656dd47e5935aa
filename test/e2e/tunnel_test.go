package e2e_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/execlab/executor/harness"
	"github.com/execlab/executor/internal/refbin"
)

// Port tunnels (issue 31) through a real registry + rendezvous (behind `executor chaos`)
// and `executor remote`: `executor tunnel -L/-D` as a user runs it.

// blobServer serves /size/N: N bytes of a ChaCha8 stream seeded by N, so a client can
// check every byte without the server holding them.
func blobServer(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/size/"), 10, 64)
		if err != nil || n < 0 {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		_, _ = io.CopyN(w, blobReader(n), n)
	})}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return ln.Addr().(*net.TCPAddr).Port
}

func blobReader(n int64) io.Reader {
	var seed [32]byte
	copy(seed[:], strconv.FormatInt(n, 10))
	return rand.NewChaCha8(seed)
}

func blobSum(n int64) [32]byte {
	h := sha256.New()
	_, _ = io.CopyN(h, blobReader(n), n)
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}

// echoServer echoes each connection until EOF, then half-closes it.
func echoServer(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
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
				_, _ = io.Copy(c, c)
				_ = c.(*net.TCPConn).CloseWrite()
				_, _ = io.Copy(io.Discard, c)
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return ln.Addr().(*net.TCPAddr).Port
}

// startTunnelCLI runs `executor tunnel` through the rig with args and waits until its
// listeners accept (bounded: 30 s). Cleanup interrupts it.
func (r *chaosRig) startTunnelCLI(t *testing.T, waitAddrs []string, args ...string) *tunnelCLI {
	t.Helper()
	tc := launchTunnelCLI(t, append([]string{"--registry", r.Proxy, "--environment-id", r.Env, "--token-file", r.TokenFile, "--log-level", "info"}, args...))
	// "forwarding"/"SOCKS5 listening" are logged after the session is up.
	tc.waitOutput(t, fmt.Sprintf("listening on %v", waitAddrs), func(out string) bool { return strings.Count(out, "listen=") >= len(waitAddrs) })
	return tc
}

func httpGetSum(ctx context.Context, url string) (int64, [32]byte, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return 0, [32]byte{}, err
	}
	defer resp.Body.Close()
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return n, s, err
}

func TestTunnel_ThroughRelay(t *testing.T) {
	rig := startChaosRig(t)
	httpPort, echoPort := blobServer(t), echoServer(t)
	lHTTP, lEcho, lRefused, dSocks := freeAddr(t), freeAddr(t), freeAddr(t), freeAddr(t)
	cli := rig.startTunnelCLI(t, []string{lHTTP, lEcho, lRefused, dSocks},
		"-L", lHTTP+":127.0.0.1:"+strconv.Itoa(httpPort),
		"-L", lEcho+":localhost:"+strconv.Itoa(echoPort),
		"-L", lRefused+":192.0.2.1:80",
		"-D", dSocks)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	t.Run("download 256 MiB", func(t *testing.T) {
		const size = 256 << 20
		want := blobSum(size)
		start := time.Now()
		n, got, err := httpGetSum(ctx, fmt.Sprintf("http://%s/size/%d", lHTTP, size))
		took := time.Since(start)
		if err != nil || n != size || got != want {
			t.Fatalf("got %d bytes (identical=%v), %v; want %d identical", n, got == want, err, size)
		}
		t.Logf("256 MiB in %v: %.0f MiB/s (machine shared; informative)", took, float64(size)/(1<<20)/took.Seconds())
	})

	t.Run("16 parallel downloads", func(t *testing.T) {
		const size = 16 << 20
		want := blobSum(size)
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		start := time.Now()
		for i := 0; i < 16; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, got, err := httpGetSum(ctx, fmt.Sprintf("http://%s/size/%d", lHTTP, size))
				if err == nil && (n != size || got != want) {
					err = fmt.Errorf("got %d bytes, identical=%v", n, got == want)
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		took := time.Since(start)
		t.Logf("16 × 16 MiB in %v: %.0f MiB/s aggregate (informative)", took, 256/took.Seconds())
	})

	t.Run("echo with half-close", func(t *testing.T) { checkEchoHalfClose(t, lEcho) })

	t.Run("refused destination", func(t *testing.T) {
		c, err := net.Dial("tcp", lRefused)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(30 * time.Second))
		if n, err := c.Read(make([]byte, 1)); n != 0 || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("refused destination: read %d, %v; want the connection closed", n, err)
		}
		waitText(t, "the refusal naming the flag", cli.out, "--tunnel-allow", 10*time.Second)
	})

	t.Run("curl --socks5-hostname", func(t *testing.T) {
		const size = 8 << 20
		want := blobSum(size)
		cmd := exec.CommandContext(ctx, "curl", "-sS", "--fail", "--socks5-hostname", dSocks,
			fmt.Sprintf("http://localhost:%d/size/%d", httpPort, size))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("curl: %v", err)
		}
		if sha256.Sum256(out) != want {
			t.Fatalf("curl through -D: %d bytes, not identical", len(out))
		}
		// A refused destination is a SOCKS5 "not allowed" (curl exit 97).
		err = exec.CommandContext(ctx, "curl", "-sS", "--socks5-hostname", dSocks, "http://192.0.2.1:80/").Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 97 {
			t.Fatalf("curl to a refused destination: %v, want exit 97", err)
		}
	})

	t.Run("relay cut of 5 s during a transfer", func(t *testing.T) {
		const size = 512 << 20
		want := blobSum(size)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/size/%d", lHTTP, size), nil)
		tr := &http.Transport{DisableKeepAlives: true}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		if _, err := io.CopyN(h, resp.Body, 16<<20); err != nil {
			t.Fatal(err)
		}
		rig.inject(t, "side=harness cut=5s")
		done := make(chan struct{})
		var n int64
		var cerr error
		go func() {
			defer close(done)
			n, cerr = io.Copy(h, resp.Body)
			n += 16 << 20
		}()
		select {
		case <-done:
		case <-time.After(90 * time.Second):
			resp.Body.Close()
			<-done
			t.Fatal("transfer hung across the relay cut")
		}
		resp.Body.Close()
		var sum [32]byte
		copy(sum[:], h.Sum(nil))
		switch {
		case cerr == nil && n == size && sum == want:
			t.Logf("transfer completed intact across the cut")
		case cerr != nil || n < size:
			t.Logf("transfer reset after %d bytes (%v), as allowed", n, cerr)
			waitText(t, "the reset log line", cli.out, "reset", 30*time.Second)
		default:
			t.Fatalf("transfer of %d bytes completed corrupted", n)
		}
		// The listeners survived: a new download works once the relay is back.
		deadline := time.Now().Add(60 * time.Second)
		for {
			n, got, err := httpGetSum(ctx, fmt.Sprintf("http://%s/size/%d", lHTTP, 1<<20))
			if err == nil && n == 1<<20 && got == blobSum(1<<20) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no download through the tunnel 60 s after the cut: %v", err)
			}
			time.Sleep(500 * time.Millisecond)
		}
	})

	t.Run("SIGINT leaves nothing behind", func(t *testing.T) {
		cli.interruptHoldingIdleConn(t, lEcho)
		if c, err := net.DialTimeout("tcp", lHTTP, time.Second); err == nil {
			c.Close()
			t.Fatal("the -L listener still accepts after exit")
		}
	})
}

// Against a released executor `executor tunnel` fails fast and says why, and the
// executor logs nothing about it (nothing tunnel-related was sent).
func TestTunnel_ReleasedExecutor(t *testing.T) {
	for _, rel := range refbin.Releases(t) {
		t.Run(rel.Version, func(t *testing.T) {
			rig := startChaosRigWith(t, rigOptions{reference: &rel})
			before := rig.executor.Output()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, remoteExecutorBin(t), "tunnel", "--registry", rig.Proxy, "--environment-id", rig.Env,
				"--token-file", rig.TokenFile, "-L", freeAddr(t)+":127.0.0.1:1")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 255 {
				t.Fatalf("executor tunnel: %v, want exit 255 (output %s)", err, out.String())
			}
			if got := out.String(); strings.Count(got, "does not support tunnels") != 1 {
				t.Fatalf("output %q: want the message once", got)
			}
			time.Sleep(time.Second) // let the executor log what it would
			after := rig.executor.Output()
			if extra := strings.TrimPrefix(after, before); strings.Contains(strings.ToLower(extra), "error") || strings.Contains(extra, "tunnel") {
				t.Fatalf("the released executor logged: %s", extra)
			}
		})
	}
}

// harness.Client.DialTCP over harness.Dial (the relay), without the CLI: bytes verified
// both ways, half-close, and a relay cut resets the open connection (ErrTunnelReset) while
// the Client recovers and opens new ones.
func TestTunnel_SDKThroughRelay(t *testing.T) {
	rig := startChaosRig(t)
	tok, err := os.ReadFile(rig.TokenFile)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := harness.Dial(ctx, &harness.RemoteOptions{Registry: rig.Proxy, EnvironmentID: rig.Env, Token: strings.TrimSpace(string(tok))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, "tunnel-e2e", ""); err != nil {
		t.Fatal(err)
	}
	echoPort := echoServer(t)

	conn, err := c.DialTCP(ctx, "127.0.0.1", echoPort)
	if err != nil {
		t.Fatal(err)
	}
	const size = 32 << 20
	payload := make([]byte, size)
	_, _ = rand.NewChaCha8([32]byte{31}).Read(payload)
	go func() {
		_, _ = conn.Write(payload)
		_ = conn.CloseWrite()
	}()
	got, err := io.ReadAll(conn)
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("echo of %d bytes: got %d, equal=%v, %v", size, len(got), bytes.Equal(got, payload), err)
	}
	conn.Close()

	// An idle tunnel across a cut: reset, not hung.
	idle, err := c.DialTCP(ctx, "127.0.0.1", echoPort)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	readErr := make(chan error, 1)
	go func() { _, err := idle.Read(make([]byte, 1)); readErr <- err }()
	rig.inject(t, "side=harness cut=2s")
	select {
	case err := <-readErr:
		if !errors.Is(err, harness.ErrTunnelReset) {
			t.Fatalf("read across the cut: %v, want ErrTunnelReset", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("tunnel read still blocked 60 s after the relay cut")
	}
	// The Client recovered: a new tunnel works.
	deadline := time.Now().Add(60 * time.Second)
	for {
		nc, err := c.DialTCP(ctx, "127.0.0.1", echoPort)
		if err == nil {
			_, _ = nc.Write([]byte("again"))
			_ = nc.CloseWrite()
			b, err := io.ReadAll(nc)
			nc.Close()
			if err == nil && string(b) == "again" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no tunnel 60 s after the cut: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
