package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
)

// Remote listeners (`executor tunnel -R`, issue 31) through `executor serve` and through
// a real registry + rendezvous + `executor remote`.

var rListenLine = regexp.MustCompile(`listen_on_executor=(\S+) destination=(\S+)`)

// startRTunnelCLI runs `executor tunnel` with base (how to reach the executor) and args,
// waits (≤ 30 s) until it logged want -R listeners, and returns it with the executor-side
// address of each, by destination. Cleanup interrupts it.
func startRTunnelCLI(t *testing.T, base []string, want int, args ...string) (*tunnelCLI, map[string]string) {
	t.Helper()
	tc := launchTunnelCLI(t, slices.Concat(base, []string{"--log-level", "info"}, args))
	var m [][]string
	tc.waitOutput(t, fmt.Sprintf("%d -R listeners", want), func(out string) bool {
		m = rListenLine.FindAllStringSubmatch(out, -1)
		return len(m) >= want
	})
	addrs := map[string]string{}
	for _, x := range m {
		addrs[x[2]] = x[1]
	}
	return tc, addrs
}

// runRTunnelCLI runs `executor tunnel` to its end (≤ 60 s) and returns its exit code and
// output.
func runRTunnelCLI(t *testing.T, base []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, remoteExecutorBin(t), append(append([]string{"tunnel"}, base...), args...)...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("executor tunnel: %v", err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// checkRTunnel runs the -R checks against an executor reached with base; extra, when
// set, runs before the SIGINT check with the echo listener's executor-side address.
func checkRTunnel(t *testing.T, base []string, extra func(t *testing.T, rEcho string, cli *tunnelCLI)) {
	httpPort, echoPort := blobServer(t), echoServer(t)
	httpDest, echoDest := "127.0.0.1:"+strconv.Itoa(httpPort), "127.0.0.1:"+strconv.Itoa(echoPort)
	cli, addrs := startRTunnelCLI(t, base, 2, "-R", "0:"+httpDest, "-R", "127.0.0.1:0:"+echoDest)
	rHTTP, rEcho := addrs[httpDest], addrs[echoDest]
	if rHTTP == "" || rEcho == "" {
		t.Fatalf("listeners %v: want one for %s and %s", addrs, httpDest, echoDest)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	t.Run("download 64 MiB", func(t *testing.T) {
		const size = 64 << 20
		want := blobSum(size)
		start := time.Now()
		n, got, err := httpGetSum(ctx, fmt.Sprintf("http://%s/size/%d", rHTTP, size))
		took := time.Since(start)
		if err != nil || n != size || got != want {
			t.Fatalf("got %d bytes (identical=%v), %v; want %d identical", n, got == want, err, size)
		}
		t.Logf("64 MiB through -R in %v: %.0f MiB/s (machine shared; informative)", took, float64(size)/(1<<20)/took.Seconds())
	})

	t.Run("echo with half-close", func(t *testing.T) { checkEchoHalfClose(t, rEcho) })

	t.Run("refused bind", func(t *testing.T) {
		code, out := runRTunnelCLI(t, base, "-R", "0.0.0.0:0:"+httpDest)
		if code != 255 || !strings.Contains(out, "--tunnel-listen-allow") || !strings.Contains(out, "0.0.0.0:0") {
			t.Fatalf("exit %d, output %q; want 255 and a refusal naming the bind and --tunnel-listen-allow", code, out)
		}
	})

	if extra != nil {
		extra(t, rEcho, cli)
	}

	t.Run("SIGINT closes the listeners and leaves no process", func(t *testing.T) {
		cli.interruptHoldingIdleConn(t, rEcho)
		// The executor closes the listeners with the connection; the ports are free again.
		for _, a := range []string{rHTTP, rEcho} {
			deadline := time.Now().Add(10 * time.Second)
			for {
				ln, err := net.Listen("tcp", a)
				if err == nil {
					ln.Close()
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s still bound 10 s after the tunnel exited: %v", a, err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	})
}

func TestRTunnel_ThroughServe(t *testing.T) {
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir()}
	srv := startExecServer(t, "ours", remoteExecutorBin(t), env, "serve", "--listen", "ws://127.0.0.1:0", "--log-level", "info")
	checkRTunnel(t, []string{"--url", srv.url}, nil)
	// Every listen and accept is logged with its address.
	for _, want := range []string{"tunnel listening", "tunnel accepted", "tunnel listen refused by policy", "tunnel listener closed"} {
		waitText(t, want, srv.stderr, want, 10*time.Second)
	}
}

func TestRTunnel_ThroughRelay(t *testing.T) {
	rig := startChaosRig(t)
	checkRTunnel(t, []string{"--registry", rig.Proxy, "--environment-id", rig.Env, "--token-file", rig.TokenFile},
		func(t *testing.T, rEcho string, cli *tunnelCLI) {
			t.Run("relay cut of 5 s: the listener comes back on the same port", func(t *testing.T) {
				rig.inject(t, "side=harness cut=5s")
				waitText(t, "the re-listen", cli.out, "listening on the executor's host again", 90*time.Second)
				deadline := time.Now().Add(60 * time.Second)
				for {
					err := echoOnce(rEcho)
					if err == nil {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("no echo through %s 60 s after the re-listen: %v", rEcho, err)
					}
					time.Sleep(500 * time.Millisecond)
				}
			})
		})
}

// An executor without remote listeners (here: --tunnel-listen-allow none): exit 255,
// said once, and -L still works there.
func TestRTunnel_NoCapability(t *testing.T) {
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir()}
	srv := startExecServer(t, "ours", remoteExecutorBin(t), env, "serve", "--listen", "ws://127.0.0.1:0", "--tunnel-listen-allow", "none")
	code, out := runRTunnelCLI(t, []string{"--url", srv.url}, "-R", "0:127.0.0.1:1")
	if code != 255 || strings.Count(out, "does not support remote listeners") != 1 {
		t.Fatalf("exit %d, output %q; want 255 and the message once", code, out)
	}
}

// echoOnce sends one line with half-close through addr and checks the echo.
func echoOnce(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "again"); err != nil {
		return err
	}
	_ = c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "again" {
		return fmt.Errorf("echo %q, %v", got, err)
	}
	return nil
}

// Against a released exec-server, -R exits 255 and says so once.
func TestRTunnel_ReleasedExecutor(t *testing.T) {
	for _, rel := range refbin.Releases(t) {
		t.Run(rel.Version, func(t *testing.T) {
			url := startReferenceServe(t, rel)
			code, out := runRTunnelCLI(t, []string{"--url", url}, "-R", "0:127.0.0.1:1")
			if code != 255 || strings.Count(out, "does not support remote listeners") != 1 {
				t.Fatalf("exit %d, output %q; want 255 and the message once", code, out)
			}
		})
	}
}
