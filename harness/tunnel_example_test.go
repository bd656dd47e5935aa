package harness_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"

	"github.com/execlab/executor/harness"
)

// exampleServe starts `executor serve` (the binary TestMain built) and returns its URL.
func exampleServe() (string, func()) {
	home, _ := os.MkdirTemp("/var/tmp", "harness-example-")
	cmd := exec.Command(oursBin, "serve", "--listen", "ws://127.0.0.1:0")
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	sc := bufio.NewScanner(out)
	url := ""
	for url == "" && sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "ws://") {
			url = l
		}
	}
	return url, func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); os.RemoveAll(home) }
}

// A service listening on the executor's loopback (a dev server's preview, a database) is
// reached through the Client's connection: DialTCP is a net.Conn, so it plugs into any
// Go client, here net/http's.
func ExampleClient_DialTCP() {
	url, stop := exampleServe()
	defer stop()

	// The service, on the executor's host (here the same machine).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "hello from the executor's host")
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	port := ln.Addr().(*net.TCPAddr).Port

	ctx := context.Background()
	c, err := harness.DialLocal(ctx, url, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, "example", ""); err != nil {
		panic(err)
	}
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return c.DialTCP(ctx, "127.0.0.1", port) // as the executor's host sees it
	}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get("http://preview/")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(string(body))
	// Output: hello from the executor's host
}
