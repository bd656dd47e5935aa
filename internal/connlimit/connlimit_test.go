package connlimit_test

import (
	"net"
	"net/http"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/execlab/executor/internal/connlimit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// accept dials ln and returns the server side of the new connection, or nil when
// Accept did not return within wait.
func accept(t *testing.T, ln net.Listener, wait time.Duration) (server, client net.Conn) {
	t.Helper()
	got := make(chan net.Conn, 1)
	go func() { // owner: this helper; it ends when Accept returns (ln.Close at cleanup)
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		got <- c
	}()
	cl, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	select {
	case c := <-got:
		return c, cl
	case <-time.After(wait):
		return nil, cl
	}
}

// At the cap the oldest evictable connection (new or idle) is closed for the newcomer;
// busy (active, hijacked) ones never are; with nothing evictable, Accept waits until a
// slot is freed; Close stops the wait.
func TestLimiter_EvictsOldestIdleAndWaitsWhenAllBusy(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := connlimit.New(2)
	ln := l.Listener(raw)
	defer ln.Close()

	c1, _ := accept(t, ln, 5*time.Second)
	l.ConnState(c1, http.StateNew)
	c2, _ := accept(t, ln, 5*time.Second)
	l.ConnState(c2, http.StateNew)
	if l.Open() != 2 {
		t.Fatalf("open = %d, want 2", l.Open())
	}
	l.ConnState(c1, http.StateActive) // c1 inside a request: c2 (new, idle) goes
	c3, _ := accept(t, ln, 5*time.Second)
	if c3 == nil {
		t.Fatal("at the cap with an idle connection: newcomer not admitted")
	}
	if _, err := c2.Write([]byte("x")); err == nil {
		t.Fatal("the idle connection was not evicted")
	}
	if l.Evicted() != 1 || l.Open() != 2 {
		t.Fatalf("evicted %d, open %d; want 1, 2", l.Evicted(), l.Open())
	}
	l.ConnState(c3, http.StateHijacked) // a WebSocket session: never evicted

	// Every slot busy: the next Accept waits …
	got := make(chan net.Conn, 1)
	go func() { // owner: this test; returns once c1 closes (or ln closes)
		c, err := ln.Accept()
		if err != nil {
			got <- nil
			return
		}
		got <- c
	}()
	cl, err := net.Dial("tcp", raw.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	select {
	case <-got:
		t.Fatal("admitted over the cap while every connection was busy")
	case <-time.After(100 * time.Millisecond):
	}
	c1.Close() // … until a slot is freed.
	select {
	case c4 := <-got:
		if c4 == nil {
			t.Fatal("Accept failed after a slot was freed")
		}
		c4.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("Accept still waiting after a slot was freed")
	}
	c3.Close()
	if l.Open() != 0 {
		t.Fatalf("open = %d after every close, want 0", l.Open())
	}
}
