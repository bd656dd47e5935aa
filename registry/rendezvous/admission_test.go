package rendezvous_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/execlab/executor/registry/rendezvous"
	"github.com/execlab/executor/relay/frame"
	"github.com/execlab/executor/relay/mux"
	"github.com/execlab/executor/relay/wsconn"
)

// subjectURL returns a fresh harness URL issued to subject.
func (f *hubFixture) subjectURL(env, subject string) string {
	return f.signer.URL(f.base, rendezvous.Claims{Role: rendezvous.RoleHarness, EnvironmentID: env, Generation: f.gen,
		Expires: time.Now().Add(time.Minute), Subject: subject})
}

// dialURL dials u and returns the socket, or the HTTP status of a refused upgrade.
func (f *hubFixture) dialURL(u string) (*wsconn.Conn, int) {
	f.t.Helper()
	c, err := wsconn.Dial(context.Background(), u, &wsconn.DialOptions{Conn: &wsconn.Options{WriteTimeout: 5 * time.Second}})
	if err != nil {
		var de *wsconn.DialError
		if errors.As(err, &de) && de.StatusCode != 0 {
			return nil, de.StatusCode
		}
		f.t.Fatalf("dialing harness socket: %v", err)
	}
	f.t.Cleanup(func() { c.Close() })
	return c, 101
}

// TestHub_HarnessURLSingleUse: a signed harness URL opens one socket; a second upgrade of
// the same URL is refused with 401 (while the first is open and after it closed), so one
// connect bundle cannot open many sockets (security issue 13, finding 3).
func TestHub_HarnessURLSingleUse(t *testing.T) {
	f := newHubFixture(t, nil)
	f.executor("env")
	u := f.subjectURL("env", "tok-a")
	first, st := f.dialURL(u)
	if st != 101 {
		t.Fatalf("first upgrade: got %d, want 101", st)
	}
	if _, st := f.dialURL(u); st != 401 {
		t.Errorf("second upgrade of the same url while the first is open: got %d, want 401", st)
	}
	first.Close()
	if _, st := f.dialURL(u); st != 401 {
		t.Errorf("upgrade of a used url after its socket closed: got %d, want 401", st)
	}
	if _, st := f.dialURL(f.subjectURL("env", "tok-a")); st != 101 {
		t.Errorf("fresh url of the same subject: got %d, want 101", st)
	}
}

// TestHub_HarnessSocketCaps: one subject holds at most MaxHarnessSocketsPerSubject harness
// sockets of an environment, the environment at most MaxHarnessSockets; refusals are 429,
// and a closed socket frees its slot (security issue 13, finding 3).
func TestHub_HarnessSocketCaps(t *testing.T) {
	f := newHubFixture(t, nil)
	f.executor("env")
	open := func(subject string, n int) []*wsconn.Conn {
		var cs []*wsconn.Conn
		for i := range n {
			c, st := f.dialURL(f.subjectURL("env", subject))
			if st != 101 {
				t.Fatalf("%s socket %d: got %d, want 101", subject, i, st)
			}
			cs = append(cs, c)
		}
		return cs
	}
	a := open("tok-a", rendezvous.MaxHarnessSocketsPerSubject)
	if _, st := f.dialURL(f.subjectURL("env", "tok-a")); st != 429 {
		t.Errorf("socket %d of one subject: got %d, want 429", rendezvous.MaxHarnessSocketsPerSubject+1, st)
	}
	open("tok-b", rendezvous.MaxHarnessSockets-rendezvous.MaxHarnessSocketsPerSubject)
	if _, st := f.dialURL(f.subjectURL("env", "tok-c")); st != 429 {
		t.Errorf("socket %d of the environment: got %d, want 429", rendezvous.MaxHarnessSockets+1, st)
	}
	// The hub counts a socket once its read loop runs, just after the upgrade.
	deadline := time.Now().Add(5 * time.Second)
	for f.hub.Stats().HarnessSockets != rendezvous.MaxHarnessSockets && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := f.hub.Stats().HarnessSockets; got != rendezvous.MaxHarnessSockets {
		t.Errorf("open harness sockets: got %d, want %d", got, rendezvous.MaxHarnessSockets)
	}
	a[0].Close()
	// The slot frees when the hub has torn the socket down; until then 429.
	for {
		_, st := f.dialURL(f.subjectURL("env", "tok-c"))
		if st == 101 {
			break
		}
		if st != 429 || time.Now().After(deadline.Add(5*time.Second)) {
			t.Fatalf("after a socket closed, another subject: got %d, want 101", st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// muxExecutor runs a relay/mux executor (the reference's per-frame rules, unchanged) on an
// executor socket of the hub. Its handler accepts message 1 "good" (message 2, then one data
// record) and fails anything else, which the mux charges to its failure budget.
type muxExecutor struct {
	m       *mux.Mux
	paused  atomic.Int64 // "pausing Noise relay handshakes" warnings
	cancel  context.CancelFunc
	stopped chan struct{}
}

func startMuxExecutor(t *testing.T, f *hubFixture, env string) *muxExecutor {
	t.Helper()
	e := &muxExecutor{stopped: make(chan struct{})}
	log := slog.New(&countHandler{match: "pausing Noise relay handshakes", n: &e.paused})
	e.m = mux.New(f.executor(env), func(ctx context.Context, s *mux.Stream) {
		p, err := s.ReadPacket(ctx)
		if err != nil || string(p.Payload) != "good" {
			return
		}
		if s.WritePacket(ctx, mux.Packet{Handshake: true, Payload: []byte("msg2")}) != nil || s.Established() != nil {
			return
		}
		_ = s.WritePacket(ctx, mux.Packet{Payload: []byte("hello")})
		<-ctx.Done()
	}, &mux.Options{Logger: log})
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() { defer close(e.stopped); _ = e.m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-e.stopped })
	return e
}

// countHandler counts log records whose message contains match.
type countHandler struct {
	match string
	n     *atomic.Int64
}

func (h *countHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.match) {
		h.n.Add(1)
	}
	return nil
}
func (h *countHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countHandler) WithGroup(string) slog.Handler      { return h }

// TestHub_AbusiveHarnessCannotCoolDownExecutor: a harness token whose streams the executor
// keeps resetting (1-byte handshakes, sent one after another on one socket and pipelined on
// fresh sockets, as the probe of security issue 13 finding 4 did) has its sockets closed
// and, after HarnessFailureBudget failures, its upgrades refused — before the executor's
// own failure budget pauses handshakes for everyone. A harness with another token then
// still completes its handshake.
func TestHub_AbusiveHarnessCannotCoolDownExecutor(t *testing.T) {
	f := newHubFixture(t, nil)
	ex := startMuxExecutor(t, f, "env")
	garbage := []byte{0x01}
	refused := 0
	for attempt := range 20 {
		h, st := f.dialURL(f.subjectURL("env", "abuser"))
		if st != 101 {
			if st != 429 {
				t.Fatalf("abusive attempt %d: upgrade got %d, want 101 or 429", attempt, st)
			}
			refused++
			continue
		}
		stream := "abuse-" + string(rune('a'+attempt))
		write(t, h, enc(t, stream, &frame.Resume{}))
		if attempt%2 == 0 {
			// Sequential: a new handshake after each reset, on the same socket.
			for range 10 {
				if h.WriteFrame(context.Background(), enc(t, stream, &frame.Handshake{Payload: garbage})) != nil {
					break
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, err := h.ReadFrame(ctx)
				cancel()
				if err != nil {
					break
				}
			}
		} else {
			// Pipelined: handshakes and early data without waiting.
			for i := range 10 {
				_ = h.WriteFrame(context.Background(), enc(t, stream, &frame.Handshake{Payload: garbage}))
				_ = h.WriteFrame(context.Background(), data(t, stream, uint32(i), garbage))
			}
		}
		if !ended(h) {
			t.Errorf("abusive attempt %d: the rendezvous left the socket open", attempt)
			h.Close()
		}
	}
	if refused == 0 {
		t.Errorf("the abusive token's upgrades were never refused")
	}
	if n := ex.paused.Load(); n != 0 || ex.m.Stats().CoolingDown {
		t.Fatalf("the executor paused handshakes %d times (cooling down now: %v); the abuser reached its failure budget", n, ex.m.Stats().CoolingDown)
	}
	if got := f.hub.Stats().HarnessFailures; got < rendezvous.HarnessFailureBudget {
		t.Errorf("harness failures counted: got %d, want >= %d", got, rendezvous.HarnessFailureBudget)
	}

	// Another token's harness still gets through.
	h, st := f.dialURL(f.subjectURL("env", "legit"))
	if st != 101 {
		t.Fatalf("legitimate harness upgrade: got %d, want 101", st)
	}
	write(t, h, enc(t, "legit-1", &frame.Resume{}))
	write(t, h, enc(t, "legit-1", &frame.Handshake{Payload: []byte("good")}))
	if got := decode(t, read(t, h)); got.StreamID != "legit-1" || !isHandshake(got.Body) {
		t.Fatalf("legitimate harness got %+v, want message 2", got)
	}
	if got := decode(t, read(t, h)); got.StreamID != "legit-1" || !isData(got.Body, "hello") {
		t.Errorf("legitimate harness got %+v, want the executor's data record", got)
	}
}

func isHandshake(b frame.Body) bool { _, ok := b.(*frame.Handshake); return ok }
func isData(b frame.Body, want string) bool {
	d, ok := b.(*frame.Data)
	return ok && string(d.Payload) == want
}

// TestHub_ExecutorResetEndsHarnessSocket: the executor's reset reaches the harness, then the
// rendezvous closes the harness socket (one stream per socket, spec/relay-noise.md §4.1) and
// does not echo a reset back to the executor.
func TestHub_ExecutorResetEndsHarnessSocket(t *testing.T) {
	f := newHubFixture(t, nil)
	ex := f.executor("env")
	h, _ := f.dialURL(f.subjectURL("env", "tok-a"))
	write(t, h, enc(t, "s-1", &frame.Resume{}))
	write(t, h, enc(t, "s-1", &frame.Handshake{Payload: []byte("msg1")}))
	read(t, ex)
	read(t, ex)
	reset := enc(t, "s-1", &frame.Reset{Reason: rendezvous.ResetReason})
	write(t, ex, reset)
	if got := read(t, h); !bytes.Equal(got, reset) {
		t.Fatalf("harness got %x, want the executor's reset verbatim", got)
	}
	if !ended(h) {
		t.Fatalf("harness socket still open after the executor reset its stream")
	}
	// The next frame the executor sees is a marker of a new harness, not an echoed reset.
	h2, _ := f.dialURL(f.subjectURL("env", "tok-b"))
	marker := enc(t, "s-2", &frame.Resume{})
	write(t, h2, marker)
	if got := read(t, ex); !bytes.Equal(got, marker) {
		t.Errorf("executor got %+v after resetting s-1, want the next harness's resume (no echoed reset)", decode(t, got))
	}
	if got := f.hub.Stats().HarnessFailures; got != 1 {
		t.Errorf("harness failures: got %d, want 1 (reset before any executor data)", got)
	}
}

// TestHub_HarnessHandshakeTimeout: a harness socket whose handshake the executor has not
// answered within HarnessHandshakeTimeout is closed; one that was answered stays.
func TestHub_HarnessHandshakeTimeout(t *testing.T) {
	f := newHubFixture(t, &rendezvous.Options{HarnessHandshakeTimeout: 300 * time.Millisecond})
	ex := f.executor("env")
	idle, _ := f.dialURL(f.subjectURL("env", "tok-a"))
	answered, _ := f.dialURL(f.subjectURL("env", "tok-a"))
	write(t, answered, enc(t, "s-1", &frame.Handshake{Payload: []byte("msg1")}))
	read(t, ex)
	msg2 := enc(t, "s-1", &frame.Handshake{Payload: []byte("msg2")})
	write(t, ex, msg2)
	read(t, answered)
	if !ended(idle) {
		t.Fatalf("silent harness socket still open after the handshake timeout")
	}
	rec := data(t, "s-1", 0, []byte("record"))
	relays(t, ex, answered, rec, "answered harness, want its record")
}

// TestHub_ConcurrentUpgradesBounded: upgrades beyond MaxConcurrentUpgrades in progress get
// 503 at once instead of queueing behind a slow registration lookup.
func TestHub_ConcurrentUpgradesBounded(t *testing.T) {
	release := make(chan struct{})
	var entered sync.WaitGroup
	const limit = 3
	entered.Add(limit)
	f := newHubFixture(t, &rendezvous.Options{MaxConcurrentUpgrades: limit,
		CurrentGeneration: func(ctx context.Context, env string) (int64, bool, error) {
			if strings.HasPrefix(env, "slow") {
				entered.Done()
				<-release
			}
			return 1, true, nil
		}})
	var wg sync.WaitGroup
	for i := range limit {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := wsconn.Dial(context.Background(), f.url(rendezvous.RoleEnvironment, "slow-"+string(rune('a'+i))), nil)
			if err == nil {
				c.Close()
			}
		}()
	}
	entered.Wait()
	_, err := wsconn.Dial(context.Background(), f.url(rendezvous.RoleEnvironment, "fast"), nil)
	var de *wsconn.DialError
	if !errors.As(err, &de) || de.StatusCode != 503 {
		t.Errorf("upgrade beyond the concurrent bound: got %v, want HTTP 503", err)
	}
	close(release)
	wg.Wait()
	c, err := wsconn.Dial(context.Background(), f.url(rendezvous.RoleEnvironment, "fast"), nil)
	if err != nil {
		t.Fatalf("upgrade after the slow ones finished: %v", err)
	}
	c.Close()
}

// TestHub_MalformedFrameWarningsRateLimited: a peer sending garbage produces one warning per
// MalformedWarnInterval, the next one reporting how many were suppressed.
func TestHub_MalformedFrameWarningsRateLimited(t *testing.T) {
	var warns atomic.Int64
	var mu sync.Mutex
	var now = time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	f := newHubFixture(t, &rendezvous.Options{Now: clock,
		Logger: slog.New(&countHandler{match: "malformed", n: &warns})})
	f.executor("env")
	h, _ := f.dialURL(f.subjectURL("env", "tok-a"))
	waitDropped := func(n int64) {
		deadline := time.Now().Add(5 * time.Second)
		for f.hub.Stats().Dropped < n {
			if time.Now().After(deadline) {
				t.Fatalf("dropped: got %d, want %d", f.hub.Stats().Dropped, n)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	for range 50 {
		write(t, h, []byte("garbage"))
	}
	waitDropped(50)
	if got := warns.Load(); got != 1 {
		t.Errorf("warnings for 50 malformed frames within the interval: got %d, want 1", got)
	}
	mu.Lock()
	now = now.Add(rendezvous.MalformedWarnInterval)
	mu.Unlock()
	write(t, h, []byte("garbage"))
	waitDropped(51)
	if got := warns.Load(); got != 2 {
		t.Errorf("warnings after the interval: got %d, want 2", got)
	}
}
