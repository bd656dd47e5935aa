package harness_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/execlab/executor/jsonwire"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
	"github.com/execlab/executor/internal/wsmsg"
)

// startExampleExecutor serves an in-process executor (what `executor serve --listen
// ws://127.0.0.1:0` runs) on a loopback WebSocket, and returns its ws:// URL and a function
// that stops it and waits for every connection it served.
func startExampleExecutor() (url string, stop func()) {
	srv := executor.NewServer(nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu     sync.Mutex
		closed bool
		conns  sync.WaitGroup
	)
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if closed {
			mu.Unlock()
			http.Error(w, "stopping", http.StatusServiceUnavailable)
			return
		}
		conns.Add(1)
		mu.Unlock()
		defer conns.Done()
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
		if err != nil {
			return
		}
		defer c.CloseNow()
		_ = srv.ServeConn(ctx, wsmsg.New(c), executor.ConnInfo{Transport: executor.TransportWebSocket, Peer: r.RemoteAddr})
	})}
	served := make(chan struct{})
	go func() { defer close(served); _ = hs.Serve(ln) }()
	return "ws://" + ln.Addr().String(), func() {
		_ = hs.Close()
		<-served
		mu.Lock()
		closed = true
		mu.Unlock()
		cancel()
		conns.Wait()
		srv.Close()
	}
}

// exampleDir returns a directory for the examples' processes to run in, as a PathURI.
func exampleDir() (protocol.PathURI, func()) {
	dir, err := os.MkdirTemp("", "harness-example-")
	if err != nil {
		log.Fatal(err)
	}
	return protocol.FromNative(dir), func() { os.RemoveAll(dir) }
}

// Connect to an executor on a local WebSocket and complete the handshake.
func ExampleDialLocal() {
	url, stop := startExampleExecutor() // e.g. `executor serve --listen ws://127.0.0.1:0`
	defer stop()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := harness.DialLocal(ctx, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// initialize, then the initialized notification.
	res, err := c.Initialize(ctx, "example-harness", "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("session id assigned:", res.SessionID != "")
	// Output: session id assigned: true
}

// Run a process and stream its output as it arrives, until the executor reports it closed.
func ExampleClient_StartProcess() {
	url, stop := startExampleExecutor()
	defer stop()
	cwd, cleanup := exampleDir()
	defer cleanup()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := harness.DialLocal(ctx, url, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, "example-harness", ""); err != nil {
		log.Fatal(err)
	}

	_, err = c.StartProcess(ctx, protocol.ProcessStartParams{
		ProcessID: "proc-1",
		Argv:      []string{"/bin/sh", "-c", "echo hello; echo world; exit 3"},
		Cwd:       cwd,
		Env:       map[string]string{"PATH": "/usr/bin:/bin"},
	})
	if err != nil {
		log.Fatal(err)
	}
	// Notifications of one process arrive in seq order: output chunks, then
	// process/exited, then process/closed once every output stream has ended.
	for n := range c.Notifications() {
		switch n.Method {
		case protocol.MethodProcessOutput:
			o, err := n.ProcessOutput()
			if err != nil {
				log.Fatal(err)
			}
			// Chunk boundaries are the pipe's: write the bytes as they come.
			if o.Stream == protocol.StreamStdout {
				os.Stdout.Write(o.Chunk)
			}
		case protocol.MethodProcessExited:
			e, err := n.ProcessExited()
			if err != nil {
				log.Fatal(err)
			}
			fmt.Println("exit code:", e.ExitCode)
		case protocol.MethodProcessClosed:
			fmt.Println("closed")
			return
		}
	}
	log.Fatal("connection ended: ", c.Err())
	// Output:
	// hello
	// world
	// exit code: 3
	// closed
}

// Recover a session after the connection to a local executor broke: dial again, resume
// the session with initialize {resumeSessionId}, and catch up with process/read from the
// last seq seen. (A Client made by Dial does all of this itself; see ExampleDial.)
func Example_recoverAfterReconnect() {
	url, stop := startExampleExecutor()
	defer stop()
	cwd, cleanup := exampleDir()
	defer cleanup()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Acknowledged output would make the executor replay unacknowledged events on the
	// resumed connection instead; this example reads them back with process/read.
	opts := &harness.Options{DisableOutputAck: true}
	first, err := harness.DialLocal(ctx, url, opts)
	if err != nil {
		log.Fatal(err)
	}
	init, err := first.Initialize(ctx, "example-harness", "")
	if err != nil {
		log.Fatal(err)
	}
	if _, err := first.StartProcess(ctx, protocol.ProcessStartParams{
		ProcessID: "build",
		Argv:      []string{"/bin/sh", "-c", "echo compiling; echo linking"},
		Cwd:       cwd,
		Env:       map[string]string{"PATH": "/usr/bin:/bin"},
	}); err != nil {
		log.Fatal(err)
	}
	first.Close() // the connection breaks; the session and its process stay (30 s by default)

	// The executor notices the old connection's end asynchronously: until it has, a
	// resume is refused with -32010 (session still attached), so retry briefly.
	var second *harness.Client
	var resumed protocol.InitializeResult
	for attempt := 0; ; attempt++ {
		if second, err = harness.DialLocal(ctx, url, opts); err != nil {
			log.Fatal(err)
		}
		resumed, err = second.Initialize(ctx, "example-harness", init.SessionID)
		var rpcErr *harness.RPCError
		if err == nil {
			break
		}
		second.Close()
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonwire.CodeSessionAttached || attempt == 100 {
			log.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer second.Close()
	fmt.Println("same session:", resumed.SessionID == init.SessionID)

	// Catch up from the last seq this harness saw (none here), waiting for the rest.
	var after uint64
	wait := uint64(5000)
	for {
		r, err := second.ReadProcess(ctx, protocol.ProcessReadParams{ProcessID: "build", AfterSeq: &after, WaitMs: &wait})
		if err != nil {
			log.Fatal(err)
		}
		for _, ch := range r.Chunks {
			os.Stdout.Write(ch.Chunk)
		}
		after = r.NextSeq - 1
		if r.Closed {
			fmt.Println("exit code:", *r.ExitCode)
			return
		}
	}
	// Output:
	// same session: true
	// compiling
	// linking
	// exit code: 0
}

// Connect to a remote environment through its registry: the registry's connect call, the
// rendezvous WebSocket and the Noise handshake pinning the executor's key. The Client
// recovers its session by itself when the connection breaks; OnReconnect reports it.
func ExampleDial() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := harness.Dial(ctx, &harness.RemoteOptions{
		Registry:      "https://registry.example.com", // `executor registry serve`, or `executor dev`
		EnvironmentID: "my-environment",
		Token:         os.Getenv("EXECUTOR_REGISTRY_TOKEN"), // a harness-role bearer
		OnReconnect: func(done bool, err error) {
			if !done {
				log.Printf("connection lost (%v); recovering the session", err)
				return
			}
			log.Printf("recovery ended: %v", err) // nil: resumed, processes caught up
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, "example-harness", ""); err != nil {
		log.Fatal(err)
	}
	status, err := c.EnvironmentStatus(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("environment status:", status)
}
