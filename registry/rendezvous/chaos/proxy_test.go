package chaos

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/relay/wsconn"
)

// echoUpstream is a stand-in registry + rendezvous: any socket under the rendezvous path
// echoes frames back; connect answers 200 "ok".
func echoUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/rendezvous/v1/", func(w http.ResponseWriter, r *http.Request) {
		c, err := wsconn.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			b, err := c.ReadFrame(r.Context())
			if err != nil {
				return
			}
			if c.WriteFrame(r.Context(), b) != nil {
				return
			}
		}
	})
	mux.HandleFunc("/cloud/environment/e1/connect", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestProxy_CutRefusesThenRecovers drives a Proxy over real loopback sockets: frames and
// API calls pass unchanged; a harness-side cut injected through the control API closes the
// harness socket and answers new harness requests 502 while it lasts (the executor side is
// untouched); afterwards sockets work again; Serve returns once its ctx ends with no
// goroutine left (TestMain's leak gate).
func TestProxy_CutRefusesThenRecovers(t *testing.T) {
	up := echoUpstream(t)
	p, err := New(&Options{Upstream: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- p.Serve(ctx, ln) }()
	defer func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	control := httptest.NewServer(p.ControlHandler())
	defer control.Close()
	base := "ws://" + ln.Addr().String()
	dial := func(role string) (*wsconn.Conn, error) {
		return wsconn.Dial(context.Background(), base+"/rendezvous/v1/"+role+"/e1?sig=x", nil)
	}
	roundTrip := func(c *wsconn.Conn, msg string) error {
		if err := c.WriteFrame(context.Background(), []byte(msg)); err != nil {
			return err
		}
		rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer rcancel()
		b, err := c.ReadFrame(rctx)
		if err == nil && string(b) != msg {
			err = errors.New("echo differs: " + string(b))
		}
		return err
	}
	harness, err := dial("harness")
	if err != nil {
		t.Fatal(err)
	}
	defer harness.Close()
	executor, err := dial("environment")
	if err != nil {
		t.Fatal(err)
	}
	defer executor.Close()
	if err := roundTrip(harness, "h1"); err != nil {
		t.Fatalf("harness frame before the cut: %v", err)
	}
	resp, err := http.Post(control.URL+"/faults", "text/plain", strings.NewReader("side=harness cut=500ms"))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("injecting the cut: %v %v", resp, err)
	}
	resp.Body.Close()
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, err = harness.ReadFrame(rctx)
	timedOut := rctx.Err() != nil
	rcancel()
	if err == nil || timedOut {
		t.Fatalf("harness socket after the cut: read %v, want the connection closed", err)
	}
	if err := roundTrip(executor, "e1"); err != nil {
		t.Errorf("executor frame during a harness cut: %v", err)
	}
	var de *wsconn.DialError
	if _, err := dial("harness"); !errors.As(err, &de) || de.StatusCode != http.StatusBadGateway {
		t.Errorf("harness dial during the cut: %v, want HTTP 502", err)
	}
	if r, err := http.Get("http://" + ln.Addr().String() + "/cloud/environment/e1/connect"); err != nil || r.StatusCode != http.StatusBadGateway {
		t.Errorf("connect during the cut: %v %v, want 502", r, err)
	} else {
		r.Body.Close()
	}
	time.Sleep(600 * time.Millisecond)
	again, err := dial("harness")
	if err != nil {
		t.Fatalf("harness dial after the cut: %v", err)
	}
	defer again.Close()
	if err := roundTrip(again, "h2"); err != nil {
		t.Errorf("harness frame after the cut: %v", err)
	}
	if r, err := http.Get("http://" + ln.Addr().String() + "/cloud/environment/e1/connect"); err != nil || r.StatusCode != http.StatusOK {
		t.Errorf("connect after the cut: %v %v, want 200", r, err)
	} else {
		r.Body.Close()
	}
	if s := p.Stats(); s.Cuts != 1 || s.Refused != 2 || s.Links != 3 {
		t.Errorf("stats %+v: want 1 cut, 2 refused requests, 3 links", s)
	}
}
