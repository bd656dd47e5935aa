package rendezvous_test

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/registry/rendezvous"
	"github.com/execlab/executor/relay/frame"
	"github.com/execlab/executor/relay/wsconn"
)

// hubFixture is a Hub on an httptest server with URLs signed for one environment.
type hubFixture struct {
	t      *testing.T
	hub    *rendezvous.Hub
	signer *rendezvous.Signer
	base   string
	gen    int64
}

func newHubFixture(t *testing.T, opts *rendezvous.Options) *hubFixture {
	t.Helper()
	signer := rendezvous.NewRandomSigner()
	o := rendezvous.Options{}
	if opts != nil {
		o = *opts
	}
	o.Signer = signer
	hub, err := rendezvous.New(&o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(hub)
	t.Cleanup(func() { ts.Close(); hub.Close() })
	return &hubFixture{t: t, hub: hub, signer: signer, base: "ws" + strings.TrimPrefix(ts.URL, "http"), gen: 1}
}

func (f *hubFixture) url(role rendezvous.Role, env string) string {
	return f.signer.URL(f.base, rendezvous.Claims{Role: role, EnvironmentID: env, Generation: f.gen, Expires: time.Now().Add(time.Minute)})
}

func (f *hubFixture) dial(role rendezvous.Role, env string) *wsconn.Conn {
	f.t.Helper()
	c, err := wsconn.Dial(context.Background(), f.url(role, env), &wsconn.DialOptions{Conn: &wsconn.Options{WriteTimeout: 5 * time.Second}})
	if err != nil {
		f.t.Fatalf("dialing %s socket: %v", role, err)
	}
	f.t.Cleanup(func() { c.Close() })
	return c
}

// executor dials the executor socket and waits until the hub has attached it.
func (f *hubFixture) executor(env string) *wsconn.Conn {
	f.t.Helper()
	c := f.dial(rendezvous.RoleEnvironment, env)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok := f.hub.Online(env); ok {
			return c
		}
		if time.Now().After(deadline) {
			f.t.Fatal("executor socket never attached")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func enc(t *testing.T, stream string, body frame.Body) []byte {
	t.Helper()
	b, err := frame.Encode(nil, &frame.Frame{Version: frame.Version, StreamID: stream, Body: body})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func data(t *testing.T, stream string, seq uint32, payload []byte) []byte {
	return enc(t, stream, &frame.Data{Seq: seq, SegmentCount: 1, Payload: payload})
}

func write(t *testing.T, c *wsconn.Conn, b []byte) {
	t.Helper()
	if err := c.WriteFrame(context.Background(), b); err != nil {
		t.Fatalf("writing frame: %v", err)
	}
}

// read returns the next frame on c within 5 s.
func read(t *testing.T, c *wsconn.Conn) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := c.ReadFrame(ctx)
	if err != nil {
		t.Fatalf("reading frame: %v", err)
	}
	return b
}

// ended reports whether c's peer closed it within 5 s.
// relays writes b on from and requires to to read it verbatim; want says, after the
// reader's name, what was wanted (for the failure).
func relays(t *testing.T, from, to *wsconn.Conn, b []byte, want string) {
	t.Helper()
	write(t, from, b)
	if got := read(t, to); !bytes.Equal(got, b) {
		t.Errorf("%s: got %x", want, got)
	}
}

func ended(c *wsconn.Conn) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		_, err := c.ReadFrame(ctx)
		if err != nil {
			return ctx.Err() == nil
		}
	}
}

func decode(t *testing.T, b []byte) frame.Frame {
	t.Helper()
	var f frame.Frame
	if err := frame.Decode(&f, b); err != nil {
		t.Fatal(err)
	}
	return f.Clone()
}

func TestHub_RoutesBothWaysVerbatim(t *testing.T) {
	f := newHubFixture(t, nil)
	ex := f.executor("env")
	h := f.dial(rendezvous.RoleHarness, "env")
	resume := enc(t, "s-1", &frame.Resume{})
	hs := enc(t, "s-1", &frame.Handshake{Payload: []byte("msg1")})
	write(t, h, resume)
	write(t, h, hs)
	if got := read(t, ex); !bytes.Equal(got, resume) {
		t.Errorf("executor got %x, want the resume frame verbatim", got)
	}
	if got := read(t, ex); !bytes.Equal(got, hs) {
		t.Errorf("executor got %x, want the handshake frame verbatim", got)
	}
	write(t, ex, data(t, "unknown", 0, []byte{1})) // dropped
	reply := data(t, "s-1", 0, []byte("record"))
	relays(t, ex, h, reply, "harness, want the executor's data frame verbatim")
	if st := f.hub.Stats(); st.Dropped != 1 {
		t.Errorf("dropped frames: got %d, want 1 (executor frame for an unknown stream)", st.Dropped)
	}
}

func TestHub_HarnessEndResetsStream(t *testing.T) {
	f := newHubFixture(t, nil)
	ex := f.executor("env")
	h := f.dial(rendezvous.RoleHarness, "env")
	write(t, h, enc(t, "s-1", &frame.Resume{}))
	read(t, ex)
	h.Close()
	got := decode(t, read(t, ex))
	r, ok := got.Body.(*frame.Reset)
	if !ok || got.StreamID != "s-1" || r.Reason != frame.ResetReasonProtocolError {
		t.Errorf("after the harness socket ended the executor got %+v, want reset{noise_relay_protocol_error} for s-1", got)
	}
}

func TestHub_ExecutorEndClosesHarnesses(t *testing.T) {
	f := newHubFixture(t, nil)
	ex := f.executor("env")
	h := f.dial(rendezvous.RoleHarness, "env")
	write(t, h, enc(t, "s-1", &frame.Resume{}))
	read(t, ex)
	ex.Close()
	if !ended(h) {
		t.Errorf("harness socket still open after the executor socket ended")
	}
}

func TestHub_HarnessWithoutExecutorRefused(t *testing.T) {
	f := newHubFixture(t, nil)
	_, err := wsconn.Dial(context.Background(), f.url(rendezvous.RoleHarness, "env"), nil)
	var de *wsconn.DialError
	if !errors.As(err, &de) || de.StatusCode != 409 {
		t.Errorf("harness upgrade with no executor: got %v, want HTTP 409", err)
	}
}

// TestHub_BadHarnessInput: garbage, text and invalid frames are dropped without closing the
// socket; frames for another stream after the claim are dropped (the next frame of the
// claimed stream, its handshake, goes through); a claim of a held stream
// id closes the claimer; an oversized message closes the sender (and resets its stream).
func TestHub_BadHarnessInput(t *testing.T) {
	f := newHubFixture(t, nil)
	ex := f.executor("env")
	h := f.dial(rendezvous.RoleHarness, "env")
	write(t, h, []byte("garbage"))
	invalid, err := frame.EncodeUnvalidated(nil, &frame.Frame{Version: 2, StreamID: "s-1", Body: &frame.Resume{}})
	if err != nil {
		t.Fatal(err)
	}
	write(t, h, invalid)
	first := enc(t, "s-1", &frame.Resume{})
	write(t, h, first)
	write(t, h, enc(t, "s-other", &frame.Resume{}))
	marker := enc(t, "s-1", &frame.Handshake{Payload: []byte("after")})
	write(t, h, marker)
	if got := read(t, ex); !bytes.Equal(got, first) {
		t.Fatalf("executor got %x first, want the first valid frame", got)
	}
	if got := read(t, ex); !bytes.Equal(got, marker) {
		t.Fatalf("executor got %x, want the next frame of the claimed stream (others dropped)", got)
	}
	if st := f.hub.Stats(); st.Dropped != 3 {
		t.Errorf("dropped: got %d, want 3 (garbage, invalid, foreign stream)", st.Dropped)
	}

	// Another harness claiming s-1 is closed; the holder keeps working.
	thief := f.dial(rendezvous.RoleHarness, "env")
	write(t, thief, enc(t, "s-1", &frame.Resume{}))
	if !ended(thief) {
		t.Errorf("harness claiming a held stream id was not closed")
	}
	reply := data(t, "s-1", 1, []byte("still mine"))
	relays(t, ex, h, reply, "holder after the claim conflict, want its frame")
	if st := f.hub.Stats(); st.ClaimConflicts != 1 {
		t.Errorf("claim conflicts: got %d, want 1", st.ClaimConflicts)
	}

	// A text message is dropped; an oversized message ends the sender.
	ws, _, err := websocket.Dial(context.Background(), f.url(rendezvous.RoleHarness, "env"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	if err := ws.Write(context.Background(), websocket.MessageText, []byte("text")); err != nil {
		t.Fatal(err)
	}
	big := enc(t, "s-big", &frame.Handshake{Payload: make([]byte, 200<<10)})
	if err := ws.Write(context.Background(), websocket.MessageBinary, big); err != nil {
		t.Fatal(err)
	}
	if got := read(t, ex); !bytes.Equal(got, big) {
		t.Fatalf("executor got %d bytes, want the 200 KiB frame after the dropped text message", len(got))
	}
	_ = ws.Write(context.Background(), websocket.MessageBinary, make([]byte, rendezvous.MaxMessageSize+1))
	got := decode(t, read(t, ex))
	if _, ok := got.Body.(*frame.Reset); !ok || got.StreamID != "s-big" {
		t.Errorf("after an oversized message the executor got %+v, want a reset for s-big", got)
	}
}

// TestHub_SlowHarness: a harness that never reads is closed after SlowConsumerTimeout; the
// executor's other stream keeps flowing and the executor gets a reset for the slow stream.
func TestHub_SlowHarness(t *testing.T) {
	const timeout = 300 * time.Millisecond
	f := newHubFixture(t, &rendezvous.Options{SlowConsumerTimeout: timeout})
	ex := f.executor("env")
	slow := f.dial(rendezvous.RoleHarness, "env")
	fast := f.dial(rendezvous.RoleHarness, "env")
	write(t, slow, enc(t, "slow", &frame.Resume{}))
	write(t, fast, enc(t, "fast", &frame.Resume{}))
	read(t, ex)
	read(t, ex)
	// Flood the slow stream (it never reads) until the hub gives up on it: the executor's
	// writes must not block longer than the policy allows.
	payload := make([]byte, 200<<10)
	start := time.Now()
	var resetSeen bool
	for i := 0; i < 400 && f.hub.Stats().SlowConsumers == 0; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*timeout+5*time.Second)
		err := ex.WriteFrame(ctx, data(t, "slow", uint32(i), payload))
		cancel()
		if err != nil {
			t.Fatalf("executor write %d blocked past the policy: %v", i, err)
		}
	}
	if f.hub.Stats().SlowConsumers != 1 {
		t.Fatalf("slow consumers: got %d after flooding, want 1", f.hub.Stats().SlowConsumers)
	}
	t.Logf("slow harness closed after %v", time.Since(start))
	// The fast stream still works.
	msg := data(t, "fast", 0, []byte("hello"))
	relays(t, ex, fast, msg, "fast harness, want its frame")
	for !resetSeen {
		got := decode(t, read(t, ex))
		if r, ok := got.Body.(*frame.Reset); ok && got.StreamID == "slow" && r.Reason == frame.ResetReasonProtocolError {
			resetSeen = true
		}
	}
}

func TestSigner_RoundTripAndTamper(t *testing.T) {
	s := rendezvous.NewRandomSigner()
	now := time.Now()
	u := s.URL("ws://h:1", rendezvous.Claims{Role: rendezvous.RoleHarness, EnvironmentID: "env-1", Generation: 7, Expires: now.Add(time.Minute)})
	path, query, _ := strings.Cut(strings.TrimPrefix(u, "ws://h:1"), "?")
	vals := parseQuery(t, query)
	c, err := s.Verify(path, vals, now)
	if err != nil || c.Role != rendezvous.RoleHarness || c.EnvironmentID != "env-1" || c.Generation != 7 {
		t.Fatalf("Verify: got (%+v, %v), want the signed claims", c, err)
	}
	tamper := map[string]func(){
		"generation": func() { vals.Set("g", "8") },
		"expiry":     func() { vals.Set("e", "99999999999") },
		"nonce":      func() { vals.Set("n", "other") },
	}
	for name, mutate := range tamper {
		vals = parseQuery(t, query)
		mutate()
		if _, err := s.Verify(path, vals, now); !errors.Is(err, rendezvous.ErrBadSignature) {
			t.Errorf("tampered %s: got %v, want ErrBadSignature", name, err)
		}
	}
	if _, err := s.Verify(path, parseQuery(t, query), now.Add(2*time.Minute)); !errors.Is(err, rendezvous.ErrExpired) {
		t.Errorf("expired: got %v, want ErrExpired", err)
	}
	other := rendezvous.NewRandomSigner()
	if _, err := other.Verify(path, parseQuery(t, query), now); !errors.Is(err, rendezvous.ErrBadSignature) {
		t.Errorf("other key: got %v, want ErrBadSignature", err)
	}
	if _, err := s.Verify("/rendezvous/v1/admin/env-1", parseQuery(t, query), now); !errors.Is(err, rendezvous.ErrMalformedURL) {
		t.Errorf("unknown role: got %v, want ErrMalformedURL", err)
	}
}

// TestHub_PingPong: a peer that answers Pings stays; one that never reads (so never sends a
// Pong) is dropped after the pong deadline.
func TestHub_PingPong(t *testing.T) {
	f := newHubFixture(t, &rendezvous.Options{Conn: &wsconn.Options{PingInterval: 50 * time.Millisecond, PongTimeout: 150 * time.Millisecond}})
	ex := f.executor("live")
	readerDone := make(chan struct{})
	go func() { // reading answers Pings
		defer close(readerDone)
		_, _ = ex.ReadFrame(context.Background())
	}()
	f.executor("silent") // never read: no Pong
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok := f.hub.Online("silent"); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("silent socket still attached 5 s after its pong deadline")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, ok := f.hub.Online("live"); !ok {
		t.Errorf("socket answering pings was dropped")
	}
	ex.Close()
	<-readerDone
}
