package rendezvous

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/execlab/executor/relay/wsconn"
)

// Options configure a Hub. Nil means defaults, except Signer, which is required. The struct
// is never mutated.
type Options struct {
	// Signer checks the URLs' signatures. Required.
	Signer *Signer
	// CurrentGeneration reports the environment's current registration generation (ok false:
	// not registered). An executor upgrade whose URL names another generation gets 401. Nil
	// trusts the URL's generation (fencing then relies on Fence alone).
	CurrentGeneration func(ctx context.Context, environmentID string) (generation int64, ok bool, err error)
	// Conn tunes every accepted socket (ping interval, pong and write deadlines). Nil means
	// PingInterval (10 s), PongTimeout (20 s) and wsconn's write deadline (60 s);
	// ParkedReaderGrace is always on.
	Conn *wsconn.Options
	// SlowConsumerTimeout overrides SlowConsumerTimeout (tests). Zero means the default.
	SlowConsumerTimeout time.Duration
	// MaxHarnessSockets and MaxHarnessSocketsPerSubject override the admission bounds of
	// the same names. Zero means the default.
	MaxHarnessSockets           int
	MaxHarnessSocketsPerSubject int
	// HarnessHandshakeTimeout overrides HarnessHandshakeTimeout. Zero means the default.
	HarnessHandshakeTimeout time.Duration
	// MaxConcurrentUpgrades overrides MaxConcurrentUpgrades. Zero means the default.
	MaxConcurrentUpgrades int
	// ExecutorAttached, when set, is called for each executor upgrade whose URL and
	// generation check out, before the websocket is accepted, with a socket id unique to
	// this socket: registry/server records there that this node holds the environment's
	// executor (scale-out). An error refuses the upgrade with 503 (the executor redials).
	// It runs on the upgrade's goroutine, bounded by the request's context.
	ExecutorAttached func(ctx context.Context, environmentID string, generation int64, socketID string) error
	// ExecutorDetached, when set, is called once for each socket ExecutorAttached accepted,
	// when it ends (or its accept failed), from the socket's goroutine.
	ExecutorDetached func(environmentID, socketID string)
	// Logger receives debug events. Nil discards.
	Logger *slog.Logger
	// Now is the clock for URL expiry. Nil means time.Now.
	Now func() time.Time
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	var conn wsconn.Options
	if c.Conn != nil {
		conn = *c.Conn
	}
	if conn.PingInterval <= 0 {
		conn.PingInterval = PingInterval
	}
	if conn.PongTimeout <= 0 {
		conn.PongTimeout = PongTimeout
	}
	conn.ParkedReaderGrace = true
	c.Conn = &conn
	if c.SlowConsumerTimeout <= 0 {
		c.SlowConsumerTimeout = SlowConsumerTimeout
	}
	if c.MaxHarnessSockets <= 0 {
		c.MaxHarnessSockets = MaxHarnessSockets
	}
	if c.MaxHarnessSocketsPerSubject <= 0 {
		c.MaxHarnessSocketsPerSubject = MaxHarnessSocketsPerSubject
	}
	if c.HarnessHandshakeTimeout <= 0 {
		c.HarnessHandshakeTimeout = HarnessHandshakeTimeout
	}
	if c.MaxConcurrentUpgrades <= 0 {
		c.MaxConcurrentUpgrades = MaxConcurrentUpgrades
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Stats are cumulative counters, for tests and metrics.
type Stats struct {
	ExecutorSockets int64 // executor sockets currently open
	HarnessSockets  int64 // harness sockets currently open
	Dropped         int64 // frames dropped: undecodable, invalid, foreign or unknown stream
	ClaimConflicts  int64 // harness sockets closed for claiming a held stream id
	SlowConsumers   int64 // harness sockets closed by the slow-consumer policy
	ResetsSent      int64 // resets sent to executors for ended harness sockets
	Refused         int64 // upgrades refused by admission: used URL, socket caps, paused subject, too many upgrades
	HarnessFailures int64 // harness streams failed: reset by the executor before any executor data, or broken frame order
	FramesRelayed   int64 // frames queued to a socket, either direction (resets the Hub sends included)
	BytesRelayed    int64 // the bytes of those frames
}

// Hub routes frames between executor and harness sockets. See the package doc.
type Hub struct {
	opts Options
	log  *slog.Logger

	// life is the one lifetime context of the Hub: socket reads, writes and keepalives run
	// under it; Close cancels it.
	life   context.Context
	cancel context.CancelFunc

	// mu guards envs and closed: upgrades, socket ends, Fence and Online race on them.
	mu     sync.Mutex
	envs   map[string]*environment // guarded by mu
	closed bool                    // guarded by mu; no socket is admitted after Close

	// wg counts read loops (ServeHTTP calls past the upgrade), keepalives and writers.
	wg sync.WaitGroup

	// adm admits harness sockets and keeps the per-subject failure ledger (a leaf lock).
	adm *admission
	// upgrades is a semaphore of MaxConcurrentUpgrades slots, one per upgrade in progress.
	upgrades chan struct{}

	// warnMu guards the malformed-frame warning limiter: every read loop may report.
	warnMu     sync.Mutex
	lastWarn   time.Time // guarded by warnMu
	suppressed int64     // guarded by warnMu; malformed frames since the last warning

	execSockets, harnessSockets                        atomic.Int64
	dropped, claimConflicts, slowConsumers, resetsSent atomic.Int64
	refused, harnessFailures                           atomic.Int64
	framesRelayed, bytesRelayed                        atomic.Int64
}

// environment is the routing table of one environment id.
type environment struct {
	id string
	// mu guards the fields below: the executor's read loop looks up streams while harness
	// sockets claim and release them.
	mu        sync.Mutex
	executor  *socket              // current executor socket, or nil
	harnesses map[*socket]struct{} // every open harness socket
	streams   map[string]*socket   // claimed stream id → harness socket
}

// New returns a Hub. It starts nothing.
func New(opts *Options) (*Hub, error) {
	o := opts.withDefaults()
	if o.Signer == nil {
		return nil, errors.New("rendezvous: Options.Signer is required")
	}
	life, cancel := context.WithCancel(context.Background())
	return &Hub{
		opts: o, log: o.Logger.With("component", "rendezvous"),
		life: life, cancel: cancel,
		envs:     make(map[string]*environment),
		adm:      newAdmission(o.MaxHarnessSockets, o.MaxHarnessSocketsPerSubject),
		upgrades: make(chan struct{}, o.MaxConcurrentUpgrades),
	}, nil
}

// HarnessAllowed reports whether a harness of subject (a harness token's id) may connect to
// the environment now: nil, or ErrSubjectPaused after HarnessFailureBudget failed streams
// not yet forgiven. registry/server asks it before issuing a connect bundle.
func (h *Hub) HarnessAllowed(environmentID, subject string) error {
	return h.adm.allowed(environmentID, subject, h.opts.Now())
}

// malformed counts a dropped malformed frame (undecodable, invalid or non-binary) and
// warns at most once per MalformedWarnInterval, reporting the frames suppressed since.
func (h *Hub) malformed(s *socket, what string) {
	h.dropped.Add(1)
	now := h.opts.Now()
	h.warnMu.Lock()
	if !h.lastWarn.IsZero() && now.Sub(h.lastWarn) < MalformedWarnInterval {
		h.suppressed++
		h.warnMu.Unlock()
		return
	}
	suppressed := h.suppressed
	h.lastWarn, h.suppressed = now, 0
	h.warnMu.Unlock()
	h.log.Warn("dropping malformed relay frame: "+what, "role", string(s.role),
		"environment_id", s.env.id, "suppressed_since_last_warning", suppressed)
}

// Stats returns the counters.
func (h *Hub) Stats() Stats {
	return Stats{
		ExecutorSockets: h.execSockets.Load(), HarnessSockets: h.harnessSockets.Load(),
		Dropped: h.dropped.Load(), ClaimConflicts: h.claimConflicts.Load(),
		SlowConsumers: h.slowConsumers.Load(), ResetsSent: h.resetsSent.Load(),
		Refused: h.refused.Load(), HarnessFailures: h.harnessFailures.Load(),
		FramesRelayed: h.framesRelayed.Load(), BytesRelayed: h.bytesRelayed.Load(),
	}
}

// Online reports whether an executor socket is open for the environment, and its
// registration generation.
func (h *Hub) Online(environmentID string) (generation int64, ok bool) {
	h.mu.Lock()
	e := h.envs[environmentID]
	h.mu.Unlock()
	if e == nil {
		return 0, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.executor == nil {
		return 0, false
	}
	return e.executor.generation, true
}

// Fence closes the environment's executor socket if its generation is older than
// generation (a newer registration replaced it), with its harness sockets.
func (h *Hub) Fence(environmentID string, generation int64) {
	h.mu.Lock()
	e := h.envs[environmentID]
	h.mu.Unlock()
	if e == nil {
		return
	}
	e.mu.Lock()
	old := e.executor
	e.mu.Unlock()
	if old != nil && old.generation < generation {
		h.log.Debug("fencing executor socket", "environment_id", environmentID)
		old.close()
	}
}

// CloseExecutor closes the environment's executor socket (and its harness sockets) if it
// is the one recorded under socketID by Options.ExecutorAttached, and reports whether it
// did: registry/server closes a socket whose location another node has since taken (the
// executor reattached there, or a newer registration did), as Fence does on one node.
func (h *Hub) CloseExecutor(environmentID, socketID string) bool {
	h.mu.Lock()
	e := h.envs[environmentID]
	h.mu.Unlock()
	if e == nil || socketID == "" {
		return false
	}
	e.mu.Lock()
	s := e.executor
	e.mu.Unlock()
	if s == nil || s.socketID != socketID {
		return false
	}
	h.log.Debug("closing executor socket whose location moved", "environment_id", environmentID)
	s.close()
	return true
}

// Close closes every socket and waits for all of the Hub's goroutines. Later upgrades get
// 503.
func (h *Hub) Close() error {
	h.mu.Lock()
	h.closed = true
	var all []*socket
	for _, e := range h.envs {
		e.mu.Lock()
		if e.executor != nil {
			all = append(all, e.executor)
		}
		for s := range e.harnesses {
			all = append(all, s)
		}
		e.mu.Unlock()
	}
	h.mu.Unlock()
	h.cancel()
	for _, s := range all {
		s.close()
	}
	h.wg.Wait()
	return nil
}

// ServeHTTP handles one upgrade under BasePath: it checks the signed URL (401 on failure)
// and, for a harness, admission (401 for a used URL, 429 for a full environment or subject
// or a paused subject), accepts the websocket and starts the socket's read loop. At most
// MaxConcurrentUpgrades run at once; more get 503.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "rendezvous sockets are opened with GET")
		return
	}
	select {
	case h.upgrades <- struct{}{}:
		defer func() { <-h.upgrades }()
	default:
		h.refused.Add(1)
		writeError(w, http.StatusServiceUnavailable, "unavailable", "too many rendezvous upgrades in progress; retry")
		return
	}
	now := h.opts.Now()
	c, err := h.opts.Signer.Verify(r.URL.Path, r.URL.Query(), now)
	if err != nil {
		h.log.Debug("refusing rendezvous upgrade", "reason", err.Error())
		writeError(w, http.StatusUnauthorized, "unauthorized", "invalid or expired rendezvous url")
		return
	}
	if c.Role == RoleEnvironment && h.opts.CurrentGeneration != nil {
		gen, ok, err := h.opts.CurrentGeneration(r.Context(), c.EnvironmentID)
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, "internal_error", "registration lookup failed")
			return
		}
		if !ok || gen != c.Generation {
			h.log.Debug("refusing fenced executor upgrade", "environment_id", c.EnvironmentID)
			writeError(w, http.StatusUnauthorized, "registration_fenced", "a newer registration replaced this one")
			return
		}
	}
	if c.Role == RoleHarness {
		if gen, ok := h.Online(c.EnvironmentID); !ok || gen != c.Generation {
			writeError(w, http.StatusConflict, "environment_offline", "no executor is connected for this environment")
			return
		}
		switch err := h.adm.admit(c, now); {
		case errors.Is(err, ErrURLUsed):
			h.refused.Add(1)
			writeError(w, http.StatusUnauthorized, "unauthorized", "rendezvous url already used; connect again")
			return
		case err != nil:
			h.refused.Add(1)
			h.log.Debug("refusing harness upgrade", "environment_id", c.EnvironmentID, "reason", err.Error())
			writeError(w, http.StatusTooManyRequests, "rate_limited", "too many harness sockets or failed streams for this environment")
			return
		}
	}
	s := &socket{hub: h, role: c.Role, generation: c.Generation, subject: c.Subject, admitted: c.Role == RoleHarness}
	if c.Role == RoleEnvironment && h.opts.ExecutorAttached != nil {
		s.socketID = newSocketID()
		if err := h.opts.ExecutorAttached(r.Context(), c.EnvironmentID, c.Generation, s.socketID); err != nil {
			h.log.Warn("recording executor location", "environment_id", c.EnvironmentID, "error", err.Error())
			writeError(w, http.StatusServiceUnavailable, "internal_error", "recording the executor location failed; retry")
			return
		}
	}
	refuse := func() {
		if s.admitted {
			h.adm.release(c.EnvironmentID, c.Subject)
		}
		s.located(c.EnvironmentID)
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		refuse()
		writeError(w, http.StatusServiceUnavailable, "internal_error", "rendezvous is shutting down")
		return
	}
	h.wg.Add(1)
	h.mu.Unlock()

	// Without TLS the Conn writes its binary frames itself, one writev each (wsconn
	// rawframe.go); the socket pings on its own timer (no keepalive goroutine per socket).
	conn, err := wsconn.Accept(w, r, &wsconn.AcceptOptions{Conn: h.opts.Conn})
	if err != nil {
		refuse()
		h.wg.Done()
		h.log.Debug("accepting rendezvous websocket", "error", err.Error())
		return
	}
	s.conn = conn
	e, ok := h.attach(s, c.EnvironmentID)
	if !ok {
		refuse()
		s.conn.Close()
		h.wg.Done()
		return
	}
	s.env = e
	// The read loop runs on a fresh goroutine so the request goroutine (with net/http's
	// deep stack) exits; an idle socket then costs one small stack.
	go s.run()
}

// run is the socket's read loop until it ends, then its teardown. Owner: the Hub (wg,
// counted by ServeHTTP).
func (s *socket) run() {
	h := s.hub
	defer h.wg.Done()
	s.schedulePing()
	if s.role == RoleHarness {
		s.armHandshakeTimer()
	}
	if s.role == RoleEnvironment {
		h.execSockets.Add(1)
		s.executorReadLoop()
		h.execSockets.Add(-1)
	} else {
		h.harnessSockets.Add(1)
		s.harnessReadLoop()
		h.harnessSockets.Add(-1)
	}
	s.close()
	h.detach(s)
	s.located(s.env.id)
}

// located reports an executor socket recorded by ExecutorAttached as gone.
func (s *socket) located(environmentID string) {
	if s.socketID != "" && s.hub.opts.ExecutorDetached != nil {
		s.hub.opts.ExecutorDetached(environmentID, s.socketID)
	}
}

// newSocketID returns a random id for an executor socket (16 random bytes, hex).
func newSocketID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// attach adds s to its environment's table. An executor socket replaces the current one;
// a harness socket binds to the current executor socket, and is refused (false) when there
// is none of its generation anymore.
func (h *Hub) attach(s *socket, environmentID string) (*environment, bool) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, false
	}
	e := h.envs[environmentID]
	if e == nil {
		e = &environment{id: environmentID, harnesses: make(map[*socket]struct{}), streams: make(map[string]*socket)}
		h.envs[environmentID] = e
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	h.mu.Unlock()
	if s.role == RoleEnvironment {
		old := e.executor
		e.executor = s
		if old != nil {
			// Closing takes no environment lock (close only marks and drops the conn);
			// old's read loop then detaches it and its harnesses.
			old.close()
		}
		return e, true
	}
	if e.executor == nil || e.executor.generation != s.generation {
		return e, false
	}
	s.exec = e.executor
	e.harnesses[s] = struct{}{}
	return e, true
}

// detach removes an ended socket from its environment. An ended executor socket closes the
// harness sockets bound to it; an ended harness socket that had claimed a stream sends the
// executor a reset for it.
func (h *Hub) detach(s *socket) {
	e := s.env
	e.mu.Lock()
	var bound []*socket
	var resetTo *socket
	switch s.role {
	case RoleEnvironment:
		if e.executor == s {
			e.executor = nil
		}
		for hs := range e.harnesses {
			if hs.exec == s {
				bound = append(bound, hs)
			}
		}
	case RoleHarness:
		delete(e.harnesses, s)
		if s.streamID != "" && e.streams[s.streamID] == s {
			delete(e.streams, s.streamID)
			if !s.execReset.Load() {
				resetTo = s.exec
			}
		}
	}
	e.mu.Unlock()
	if s.role == RoleHarness {
		s.settle(false) // a handshake still in flight ends with its socket; not a failure
		if s.admitted {
			h.adm.release(e.id, s.subject)
		}
	}
	for _, hs := range bound {
		hs.close()
	}
	if resetTo != nil {
		s.sendReset(resetTo)
	}
	h.mu.Lock()
	e.mu.Lock()
	if e.executor == nil && len(e.harnesses) == 0 && h.envs[e.id] == e {
		delete(h.envs, e.id)
	}
	e.mu.Unlock()
	h.mu.Unlock()
}

// writeError answers a refused upgrade with the registry's error shape.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]map[string]string{"error": {"code": code, "message": msg}})
}

// String names a socket for debug logs without any credential.
func (s *socket) String() string { return fmt.Sprintf("%s socket of %s", s.role, s.env.id) }
