package harness_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"

	"github.com/execlab/executor/harness"
	"github.com/execlab/executor/internal/refbin"
)

// exampleServe starts `executor serve` (the binary TestMain built) and returns its URL.
func exampleServe() (string, func()) {
	home, _ := os.MkdirTemp("/var/tmp", "harness-example-")
	cmd := exec.Command(oursBin, "serve", "--listen", "ws://127.0.0.1:0")
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home)
	p, err := refbin.StartProc(cmd, &refbin.LaunchOptions{Line: wsURL, Kill: true})
	if err != nil {
		panic(err)
	}
	if _, err := p.AwaitLine(); err != nil {
		panic(err)
	}
	return p.URL(), func() { _ = p.Stop(); os.RemoveAll(home) }
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

// A service on the harness's side (a callback receiver, a local dev server) is offered on
// the executor's loopback: code there connects to ln's port. ListenTCP is a
// net.Listener, so it plugs into any Go server, here net/http's.
func ExampleClient_ListenTCP() {
	url, stop := exampleServe()
	defer stop()

	ctx := context.Background()
	c, err := harness.DialLocal(ctx, url, nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, "example", ""); err != nil {
		panic(err)
	}
	ln, err := c.ListenTCP(ctx, "127.0.0.1", 0) // port 0: the executor picks one
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "hello from the harness's side")
	})}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()

	// A client on the executor's host (here the same machine).
	tr := &http.Transport{}
	resp, err := (&http.Client{Transport: tr}).Get(fmt.Sprintf("http://127.0.0.1:%d/", ln.Port()))
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	tr.CloseIdleConnections()
	fmt.Println(string(body))
	_ = srv.Close()
	<-done
	// Output: hello from the harness's side
}
