package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/registry/api"
	"github.com/execlab/executor/registry/server"
)

// TestHTTPServer_IdleSocketsDoNotStarve: 1,000 idle loopback sockets — half sent one
// GET /readyz and kept the connection, half never sent a byte — against a listener capped
// at 32 connections (standing in for a small file-descriptor limit) do not keep a
// legitimate register from being served at once, and the cap holds (security issue 13,
// finding 2: 88 idle sockets on a 100-fd process used to time a connect out).
func TestHTTPServer_IdleSocketsDoNotStarve(t *testing.T) {
	const maxConns, idle = 32, 1000
	env := uniqueEnv("idle")
	f := newFixture(t, "sqlite", env, httpOptions{server.HTTPOptions{MaxConns: maxConns}})
	addr := strings.TrimPrefix(f.URL, "http://")
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range idle {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("idle socket %d: %v", i, err)
		}
		conns = append(conns, c)
		if i%2 == 0 {
			// Keep-alive: one request, read the response, stay open. Bounded by a
			// deadline: a socket already evicted answers with EOF.
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			fmt.Fprintf(c, "GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
			if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				resp.Body.Close()
			}
		}
	}
	if got := f.http.OpenConns(); got > maxConns {
		t.Errorf("open connections with %d idle sockets: got %d, want <= %d", idle, got, maxConns)
	}
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.register(env, keyJSON())
	}()
	select {
	case <-done:
		t.Logf("register served in %v behind %d idle sockets", time.Since(start), idle)
	case <-time.After(5 * time.Second):
		t.Fatalf("register starved by %d idle sockets (cap %d)", idle, maxConns)
	}
}

// TestHTTPServer_TrickledBodyCutOff: an authenticated client sending its connect body one
// byte at a time is cut off after ReadTimeout instead of holding the connection forever.
func TestHTTPServer_TrickledBodyCutOff(t *testing.T) {
	const readTimeout = 500 * time.Millisecond
	env := uniqueEnv("trickle")
	f := newFixture(t, "sqlite", env, httpOptions{server.HTTPOptions{ReadTimeout: readTimeout}})
	f.executorOnline(env)
	body, _ := json.Marshal(api.ConnectRequest{HarnessPublicKey: keyJSON()})
	c, err := net.Dial("tcp", strings.TrimPrefix(f.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		api.Path(env, api.ConnectSuffix), tokHarnessOnly, len(body))
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, c) // returns when the server closes the connection
		ended <- err
	}()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := 0; ; i++ {
		select {
		case <-ended:
			if el := time.Since(start); el > readTimeout+2*time.Second {
				t.Errorf("trickled body cut off after %v, want about %v", el, readTimeout)
			}
			return
		case <-ctx.Done():
			t.Fatalf("trickled body still accepted after %v (%d bytes sent)", time.Since(start), i)
		case <-time.After(50 * time.Millisecond):
		}
		if i < len(body)-1 { // never complete the body
			_, _ = c.Write(body[i : i+1])
		}
	}
}
