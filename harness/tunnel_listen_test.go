package harness_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/harness"
)

// ListenTCP against ours and the released executors: released ones are refused locally;
// ours accepts connections (echo with half-close both ways, several at once), refuses a
// wildcard bind naming the flag, and frees the port on Close.
func TestListenTCP_PerServer(t *testing.T) {
	forEachServer(t, func(t *testing.T, url string) {
		c, _ := dial(t, url, true)
		ln, err := c.ListenTCP(testCtx(t), "127.0.0.1", 0)
		if !c.Capabilities().TCPTunnelListen {
			if !errors.Is(err, harness.ErrNotSupported) {
				t.Fatalf("ListenTCP against a released executor: got %v, want ErrNotSupported", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if ln.Port() == 0 || !strings.HasSuffix(ln.Addr().String(), fmt.Sprintf(":%d", ln.Port())) {
			t.Fatalf("Addr %s, Port %d", ln.Addr(), ln.Port())
		}
		wait := serveConns(ln, func(tc net.Conn) { // the service, served on our side
			_, _ = io.Copy(tc, tc)
			_ = tc.(*harness.TunnelConn).CloseWrite()
		})
		const n = 4
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			go func() {
				errs <- func() error {
					conn, err := net.Dial("tcp", ln.Addr().String()) // on the executor's host (here)
					if err != nil {
						return err
					}
					defer conn.Close()
					_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
					msg := fmt.Sprintf("hello %d through -R", i)
					if _, err := io.WriteString(conn, msg); err != nil {
						return err
					}
					_ = conn.(*net.TCPConn).CloseWrite()
					got, err := io.ReadAll(conn)
					if err != nil || string(got) != msg {
						return fmt.Errorf("echo %q, %v; want %q then EOF", got, err, msg)
					}
					return nil
				}()
			}()
		}
		for i := 0; i < n; i++ {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
		if _, err := c.ListenTCP(testCtx(t), "0.0.0.0", 0); !errors.Is(err, harness.ErrTunnelRefused) || !strings.Contains(err.Error(), "--tunnel-listen-allow") {
			t.Errorf("wildcard bind: %v, want ErrTunnelRefused naming --tunnel-listen-allow", err)
		}
		if err := ln.Close(); err != nil {
			t.Fatal(err)
		}
		wait()
		if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close: %v", err)
		}
		free, err := net.Listen("tcp", ln.Addr().String())
		if err != nil {
			t.Fatalf("port still bound after Close: %v", err)
		}
		free.Close()
	})
}
