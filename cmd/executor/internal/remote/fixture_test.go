package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/execlab/executor/cmd/executor/internal/remote"
	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/harness"
	"github.com/execlab/executor/noise"
	"github.com/execlab/executor/noise/channel"
	"github.com/execlab/executor/registry/client"
	"github.com/execlab/executor/relay/frame"
	"github.com/execlab/executor/relay/wsconn"
)

const (
	testEnvID   = "env-e2e"
	testRegID   = "reg-e2e-1"
	testBearer  = "SECRET-BEARER-e2e"
	testSig     = "sig=SECRET-SIG-e2e"
	testAuthz   = "SECRET-AUTHZ-e2e"
	testSession = "remote-e2e"
)

// fixture is an httptest registry plus rendezvous. The test plays rendezvous and harness:
// every executor socket accepted on /rendezvous is handed to it as a *rvSocket.
type fixture struct {
	t          testing.TB
	registry   *httptest.Server
	rendezvous *httptest.Server
	sockets    chan *rvSocket

	// mu guards the fields below; handlers run on server goroutines.
	mu sync.Mutex
	// upgradeStatus, when non-empty, answers the next upgrades with these statuses.
	upgradeStatus []int
	// validateStatus/validateBody override the validate answer (0 = 200 {"valid":true}).
	validateStatus int
	validateBody   string
	// validateHold, when not nil, holds every validate answer until it is closed (or the
	// request ends); each held request is announced on validateHeld first.
	validateHold chan struct{}
	validateHeld chan struct{}
	// silent sockets are never read, so Pings are never answered.
	silent     bool
	registers  []registerCall
	validates  []validateCall
	upgrades   []*http.Request
	regCounter int
}

type registerCall struct {
	header http.Header
	body   []byte
}

type validateCall struct {
	header http.Header
	body   []byte
}

func newFixture(t testing.TB) *fixture {
	fx := &fixture{t: t, sockets: make(chan *rvSocket, 16)}
	fx.registry = httptest.NewServer(http.HandlerFunc(fx.serveRegistry))
	fx.rendezvous = httptest.NewServer(http.HandlerFunc(fx.serveRendezvous))
	t.Cleanup(func() {
		fx.rendezvous.CloseClientConnections()
		fx.registry.CloseClientConnections()
		for {
			select {
			case s := <-fx.sockets:
				s.close()
			default:
				fx.rendezvous.Close()
				fx.registry.Close()
				return
			}
		}
	})
	return fx
}

func (fx *fixture) rendezvousURL(gen int) string {
	return fmt.Sprintf("ws%s/rendezvous/%d?%s", strings.TrimPrefix(fx.rendezvous.URL, "http"), gen, testSig)
}

func (fx *fixture) serveRegistry(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	switch r.URL.Path {
	case "/cloud/environment/" + testEnvID + "/register":
		fx.mu.Lock()
		fx.registers = append(fx.registers, registerCall{header: r.Header.Clone(), body: body})
		fx.regCounter++
		gen := fx.regCounter
		fx.mu.Unlock()
		writeJSON(w, 200, map[string]string{
			"environment_id": testEnvID, "url": fx.rendezvousURL(gen),
			"security_profile": "noise_hybrid_ik_v1", "executor_registration_id": testRegID,
		})
	case "/cloud/environment/" + testEnvID + "/validate":
		fx.mu.Lock()
		fx.validates = append(fx.validates, validateCall{header: r.Header.Clone(), body: body})
		status, vbody, hold, held := fx.validateStatus, fx.validateBody, fx.validateHold, fx.validateHeld
		fx.mu.Unlock()
		if hold != nil {
			select {
			case held <- struct{}{}:
			case <-r.Context().Done():
				return
			}
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		if status == 0 {
			status, vbody = 200, `{"valid":true}`
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, vbody)
	default:
		http.NotFound(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (fx *fixture) serveRendezvous(w http.ResponseWriter, r *http.Request) {
	fx.mu.Lock()
	fx.upgrades = append(fx.upgrades, r.Clone(context.Background()))
	var status int
	if len(fx.upgradeStatus) > 0 {
		status, fx.upgradeStatus = fx.upgradeStatus[0], fx.upgradeStatus[1:]
	}
	fx.mu.Unlock()
	if status != 0 {
		http.Error(w, "no", status)
		return
	}
	c, err := wsconn.Accept(w, r, nil)
	if err != nil {
		return
	}
	fx.mu.Lock()
	silent := fx.silent
	fx.mu.Unlock()
	if silent {
		s := &rvSocket{conn: c, done: make(chan struct{})}
		close(s.done)
		fx.sockets <- s
		return
	}
	s := newRVSocket(c)
	fx.sockets <- s
}

// nextSocket waits for the executor's next rendezvous socket.
func (fx *fixture) nextSocket(ctx context.Context) *rvSocket {
	fx.t.Helper()
	select {
	case s := <-fx.sockets:
		fx.t.Cleanup(s.close)
		return s
	case <-ctx.Done():
		fx.t.Fatalf("waiting for the executor's rendezvous socket: %v", ctx.Err())
		return nil
	}
}

func (fx *fixture) registerCalls() []registerCall {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return append([]registerCall(nil), fx.registers...)
}

func (fx *fixture) validateCalls() []validateCall {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return append([]validateCall(nil), fx.validates...)
}

func (fx *fixture) upgradeRequests() []*http.Request {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return append([]*http.Request(nil), fx.upgrades...)
}

// rvSocket is the rendezvous end of one executor socket, demultiplexed by stream id.
type rvSocket struct {
	conn *wsconn.Conn
	done chan struct{}

	mu      sync.Mutex // guards streams
	streams map[string]chan frame.Frame
}

func newRVSocket(c *wsconn.Conn) *rvSocket {
	s := &rvSocket{conn: c, done: make(chan struct{}), streams: map[string]chan frame.Frame{}}
	go s.readLoop()
	return s
}

func (s *rvSocket) readLoop() {
	defer close(s.done)
	for {
		b, err := s.conn.ReadFrame(context.Background())
		if err != nil {
			if errors.Is(err, frame.ErrNonBinary) {
				continue
			}
			s.mu.Lock()
			for _, ch := range s.streams {
				close(ch)
			}
			s.streams = map[string]chan frame.Frame{}
			s.mu.Unlock()
			return
		}
		var f frame.Frame
		if frame.Decode(&f, b) != nil || f.Validate() != nil {
			continue
		}
		s.mu.Lock()
		ch := s.streams[f.StreamID]
		s.mu.Unlock()
		if ch != nil {
			ch <- f
		}
	}
}

func (s *rvSocket) close() {
	s.conn.Close()
	<-s.done
}

func (s *rvSocket) send(ctx context.Context, f frame.Frame) error {
	f.Version = frame.Version
	b, err := frame.EncodeUnvalidated(nil, &f)
	if err != nil {
		return err
	}
	return s.conn.WriteFrame(ctx, b)
}

// stream registers id and returns a harness-side RecordConn for it.
func (s *rvSocket) stream(id string) *hStream {
	ch := make(chan frame.Frame, 4096)
	s.mu.Lock()
	s.streams[id] = ch
	s.mu.Unlock()
	return &hStream{s: s, id: id, in: ch}
}

// hStream is the harness side of one stream (channel.RecordConn), with the harness's strict
// rules (spec §13): a reset fails the read.
type hStream struct {
	s  *rvSocket
	id string
	in chan frame.Frame
}

// errReset is what a harness stream returns once the executor reset it; its text is the
// reference's (mux.ErrStreamReset), hence the capital.
var errReset = errors.New("Noise relay stream reset") //lint:ignore ST1005 the reference's text

func (h *hStream) ReadPacket(ctx context.Context) (channel.Packet, error) {
	for {
		select {
		case f, ok := <-h.in:
			if !ok {
				return channel.Packet{}, errors.New("socket closed")
			}
			switch b := f.Body.(type) {
			case *frame.Handshake:
				return channel.Packet{Handshake: true, Payload: b.Payload}, nil
			case *frame.Data:
				return channel.Packet{Seq: b.Seq, Payload: b.Payload}, nil
			case *frame.Reset:
				return channel.Packet{}, errReset
			}
		case <-ctx.Done():
			return channel.Packet{}, ctx.Err()
		}
	}
}

func (h *hStream) WritePacket(ctx context.Context, p channel.Packet) error {
	f := frame.Frame{StreamID: h.id}
	if p.Handshake {
		f.Body = &frame.Handshake{Payload: p.Payload}
	} else {
		f.Body = &frame.Data{Seq: p.Seq, SegmentCount: 1, Payload: p.Payload}
	}
	return h.s.send(ctx, f)
}

// executorKey parses the key posted in the first register call.
func (fx *fixture) executorKey(t testing.TB) noise.PublicKey {
	t.Helper()
	regs := fx.registerCalls()
	if len(regs) == 0 {
		t.Fatal("no register call")
	}
	var body struct {
		Key json.RawMessage `json:"executor_public_key"`
	}
	if err := json.Unmarshal(regs[0].body, &body); err != nil {
		t.Fatal(err)
	}
	k, err := noise.ParsePublicKeyJSON(body.Key)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// handshake opens stream id on sock as a harness and returns the secure conn.
func (fx *fixture) handshake(ctx context.Context, t testing.TB, sock *rvSocket, id string, harness *noise.Identity) (*channel.Conn, error) {
	t.Helper()
	hs := sock.stream(id)
	if err := sock.send(ctx, frame.Frame{StreamID: id, Body: &frame.Resume{}}); err != nil {
		return nil, err
	}
	return channel.Initiator(ctx, hs, &channel.InitiatorConfig{
		Static: harness, ResponderStatic: fx.executorKey(t),
		Prologue:      noise.AppendPrologue(nil, testEnvID, testRegID, id),
		Authorization: []byte(testAuthz),
	})
}

// initialize handshakes stream id on sock as harnessID, opens a harness client on the
// secure conn and initializes testSession; a failure fails t. The caller closes the client.
func (fx *fixture) initialize(ctx context.Context, t testing.TB, sock *rvSocket, id string, harnessID *noise.Identity) *harness.Client {
	t.Helper()
	conn, err := fx.handshake(ctx, t, sock, id, harnessID)
	if err != nil {
		t.Fatal(err)
	}
	cl := harness.Open(conn, nil)
	if _, err := cl.Initialize(ctx, testSession, ""); err != nil {
		cl.Close()
		t.Fatal(err)
	}
	return cl
}

// runExecutor starts remote.Run against fx in-process with fast timers; logs go to logw.
func runExecutor(t testing.TB, fx *fixture, logw io.Writer, tweak func(*remote.Config)) {
	t.Helper()
	bearer, err := client.NewBearer(testBearer)
	if err != nil {
		t.Fatal(err)
	}
	if logw == nil {
		logw = io.Discard
	}
	log := slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, err := client.New(&client.Options{BaseURL: fx.registry.URL + "/", EnvironmentID: " " + testEnvID, Auth: bearer, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	srv := executor.NewServer(&executor.Options{Logger: log})
	cfg := remote.Config{
		Registry: c,
		Server:   srv,
		Backoff:  &wsconn.Backoff{Initial: 10 * time.Millisecond, Max: 40 * time.Millisecond},
		Logger:   log,
	}
	if tweak != nil {
		tweak(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- remote.Run(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("remote.Run: %v", err)
		}
		srv.Close() // the test created it; Run does not close it
	})
}
