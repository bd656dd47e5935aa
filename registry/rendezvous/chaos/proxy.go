package chaos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/execlab/executor/registry/api"
	"github.com/execlab/executor/registry/rendezvous"
	"github.com/execlab/executor/relay/frame"
	"github.com/execlab/executor/relay/wsconn"
)

// Options configure a Proxy. Nil is not allowed (Upstream is required); never mutated.
type Options struct {
	// Upstream is the http:// base URL of the registry + rendezvous behind the proxy.
	// Required.
	Upstream string
	// Faults is the schedule; more can be injected later (Inject, the control endpoint).
	Faults []Fault
	// Seed seeds the frame faults' random source; the same seed and traffic give the same
	// verdicts. Default 1.
	Seed uint64
	// Logger receives info logs of fired faults and debug logs of links. Nil discards.
	// Never payloads, never URL queries.
	Logger *slog.Logger
}

// Stats counts what the proxy did. All fields are totals since start.
type Stats struct {
	Links      int64  `json:"links"`      // websocket links opened
	OpenLinks  int64  `json:"open_links"` // links open now
	Frames     int64  `json:"frames"`     // frames read (either direction)
	Bytes      int64  `json:"bytes"`      // bytes of frames read
	Dropped    int64  `json:"dropped"`    // data frames dropped
	Duplicated int64  `json:"duplicated"` // data frames sent twice
	Reordered  int64  `json:"reordered"`  // data frames held back to be overtaken
	Delayed    int64  `json:"delayed"`    // frames held by a delay fault
	Cuts       int64  `json:"cuts"`       // cut faults fired
	Stalls     int64  `json:"stalls"`     // stall faults fired
	Refused    int64  `json:"refused"`    // requests refused during a cut
	Fired      int64  `json:"fired"`      // faults fired in all
	Pending    int64  `json:"pending"`    // faults not fired yet
	LastFault  string `json:"last_fault"` // the last fault fired, as a spec

	// Relay ARQ v1 traffic (docs/reliability.md §8), counted whatever the faults: frames
	// offering or accepting a relay feature (field 100), ack_frames, and frames of any kind
	// whose ack or ack_bits is non-zero. All three stay 0 between released peers.
	FeatureFrames int64 `json:"feature_frames"`
	AckFrames     int64 `json:"ack_frames"`
	AckFields     int64 `json:"ack_fields"`
}

// Proxy is the fault-injecting rendezvous proxy. All methods are safe for concurrent use.
// Lock order: Proxy.mu is a leaf (never held across I/O or while taking another lock).
type Proxy struct {
	opts     Options
	log      *slog.Logger
	upstream *url.URL
	rp       *httputil.ReverseProxy
	wsClient *http.Client

	// mu guards plan, links and the stats fields below it: every frame takes it once, a
	// short critical section with no I/O.
	mu        sync.Mutex
	plan      *Plan
	links     map[*link]struct{}
	stats     Stats
	wake      chan struct{} // the schedule changed: re-arm the timer (cap 1)
	linkCount atomic.Int64
	wg        sync.WaitGroup // handlers (and the links they run); Serve waits for them
	closing   bool
}

// New validates opts and returns a Proxy. It starts nothing.
func New(opts *Options) (*Proxy, error) {
	if opts == nil {
		return nil, errors.New("chaos: Options.Upstream is required")
	}
	o := *opts
	u, err := url.Parse(o.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("chaos: upstream %q must be an http:// or https:// URL", wsconn.RedactURL(o.Upstream))
	}
	if len(o.Faults) > MaxFaults {
		return nil, fmt.Errorf("chaos: more than %d faults", MaxFaults)
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Proxy{opts: o, log: o.Logger.With("component", "chaos"), upstream: u,
		links: map[*link]struct{}{}, wake: make(chan struct{}, 1)}
	p.rp = &httputil.ReverseProxy{
		Rewrite:  func(r *httputil.ProxyRequest) { r.SetURL(u) },
		ErrorLog: slog.NewLogLogger(o.Logger.Handler(), slog.LevelDebug),
	}
	p.wsClient = &http.Client{
		Transport: &http.Transport{DialContext: p.dialUpstream, DisableKeepAlives: true, Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return p, nil
}

// Serve accepts on ln until ctx is done, then closes every link and returns after all of
// its goroutines have stopped. It returns nil on a ctx stop.
func (p *Proxy) Serve(ctx context.Context, ln net.Listener) error {
	p.mu.Lock()
	p.plan = NewPlan(p.opts.Faults, time.Now(), p.opts.Seed)
	p.stats.Pending = int64(len(p.opts.Faults))
	p.mu.Unlock()
	srv := &http.Server{
		Handler:           p,
		ReadHeaderTimeout: DialTimeout,
		ConnContext:       func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) },
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(&gatedListener{Listener: ln, p: p}) }()
	p.scheduleRoutine(ctx)
	p.mu.Lock()
	p.closing = true
	all := make([]*link, 0, len(p.links))
	for l := range p.links {
		all = append(all, l)
	}
	p.mu.Unlock()
	closeLinks(all)
	_ = srv.Close()
	err := <-errc
	p.wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// scheduleRoutine fires time-triggered faults and cut/stall ends until ctx is done.
func (p *Proxy) scheduleRoutine(ctx context.Context) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		p.mu.Lock()
		cut := p.advanceLocked()
		next, ok := p.plan.NextTimer(time.Now())
		p.mu.Unlock()
		closeLinks(cut)
		var c <-chan time.Time
		if ok {
			t.Reset(time.Until(next))
			c = t.C
		}
		select {
		case <-ctx.Done():
			return
		case <-c:
		case <-p.wake:
		}
	}
}

// advanceLocked fires due faults and returns the links a cut ends; the caller closes them
// after unlocking (closing waits for the link's reader, which may be waiting for mu).
func (p *Proxy) advanceLocked() (cut []*link) {
	for _, f := range p.plan.Advance(time.Now()) {
		p.stats.Fired++
		p.stats.Pending--
		p.stats.LastFault = f.String()
		switch f.Kind {
		case KindCut:
			p.stats.Cuts++
			for l := range p.links {
				if l.side&f.Sides != 0 {
					cut = append(cut, l)
				}
			}
		case KindStall:
			p.stats.Stalls++
		}
		p.log.Info("fault fired", "fault", f.String())
	}
	return cut
}

// closeLinks closes ls; called with no lock held.
func closeLinks(ls []*link) {
	for _, l := range ls {
		l.close()
	}
}

// Inject schedules f now (its trigger counts from the proxy's start). It fails once
// MaxFaults are held or before Serve.
func (p *Proxy) Inject(f Fault) error {
	p.mu.Lock()
	if p.plan == nil || !p.plan.Add(f) {
		p.mu.Unlock()
		return fmt.Errorf("chaos: cannot add a fault (not serving, or %d already held)", MaxFaults)
	}
	p.stats.Pending++
	cut := p.advanceLocked()
	p.mu.Unlock()
	closeLinks(cut)
	signal(p.wake)
	return nil
}

// Stats returns a snapshot of the counters.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.stats
	s.Links = p.linkCount.Load()
	s.OpenLinks = int64(len(p.links))
	return s
}

// stalledUntil is when side's stall ends (zero: not stalled).
func (p *Proxy) stalledUntil(side Side) time.Time {
	if side == 0 {
		return time.Time{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.plan.Until(KindStall, side, time.Now())
}

// cutUntil is when side's cut ends (zero: not cut).
func (p *Proxy) cutUntil(side Side) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.plan.Until(KindCut, side, time.Now())
}

// judge implements the link's per-frame decision over the plan.
func (p *Proxy) judge(side Side, data bool, n int) Verdict {
	p.mu.Lock()
	p.stats.Frames++
	p.stats.Bytes += int64(n)
	if p.plan.Relayed(n) {
		// A byte trigger is due: the schedule routine fires it (and closes what a cut
		// ends, which a link's own pump must not do under mu).
		signal(p.wake)
	}
	v := p.plan.Frame(side, data, time.Now())
	p.tallyLocked(v, data)
	p.mu.Unlock()
	return v
}

// observe counts one decoded frame's ARQ fields (Stats.FeatureFrames, AckFrames,
// AckFields). Drops, duplicates and reorders apply to data frames only, whatever they carry:
// ack_frames always pass, and acks piggybacked on a dropped data frame are lost with it.
func (p *Proxy) observe(f *frame.Frame) {
	features, ackFrame, ackFields := f.Features != 0, frame.KindOf(f.Body) == frame.KindAck, f.Ack != 0 || f.AckBits != 0
	if !features && !ackFrame && !ackFields {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if features {
		p.stats.FeatureFrames++
	}
	if ackFrame {
		p.stats.AckFrames++
	}
	if ackFields {
		p.stats.AckFields++
	}
}

// tallyLocked counts one verdict.
func (p *Proxy) tallyLocked(v Verdict, data bool) {
	switch {
	case v.Copies == 0:
		p.stats.Dropped++
	case v.Copies > 1:
		p.stats.Duplicated++
	}
	if v.Reordered {
		p.stats.Reordered++
	}
	if v.Delay > 0 && (!v.Reordered || v.Delay > ReorderHold) {
		p.stats.Delayed++
	}
}

// classify returns the side a request belongs to: the executor's socket, register and
// validate calls are the executor's; harness sockets and connect calls the harness's.
func classify(path string) (side Side, socket bool) {
	if rest, ok := strings.CutPrefix(path, rendezvous.BasePath); ok {
		role, _, _ := strings.Cut(rest, "/")
		switch rendezvous.Role(role) {
		case rendezvous.RoleEnvironment:
			return SideExecutor, true
		case rendezvous.RoleHarness:
			return SideHarness, true
		}
		return 0, false
	}
	if _, suffix, ok := api.SplitPath(path); ok {
		switch suffix {
		case api.RegisterSuffix, api.ValidateSuffix:
			return SideExecutor, false
		case api.ConnectSuffix:
			return SideHarness, false
		}
	}
	return 0, false
}

// ServeHTTP relays one request: rendezvous websockets through a fault link, anything else
// (the registry API) through a reverse proxy. During a cut of its side a request gets 502;
// during a stall it waits the stall out.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	if p.closing {
		p.mu.Unlock()
		http.Error(w, "chaos: shutting down", http.StatusServiceUnavailable)
		return
	}
	p.wg.Add(1)
	p.mu.Unlock()
	defer p.wg.Done()
	side, socket := classify(strings.TrimPrefix(r.URL.Path, strings.TrimRight(p.upstream.Path, "/")))
	if g, ok := r.Context().Value(connKey{}).(*gatedConn); ok && side != 0 {
		g.setSide(side)
		if !g.wait() {
			return
		}
	}
	if side != 0 && !p.cutUntil(side).IsZero() {
		p.mu.Lock()
		p.stats.Refused++
		p.mu.Unlock()
		http.Error(w, "chaos: link cut", http.StatusBadGateway)
		return
	}
	if !socket {
		p.rp.ServeHTTP(w, r)
		return
	}
	p.serveSocket(w, r, side)
}

// serveSocket dials the upstream socket first (so its refusal reaches the client with its
// status), then accepts the client's and relays between them.
func (p *Proxy) serveSocket(w http.ResponseWriter, r *http.Request, side Side) {
	up := *p.upstream
	up.Scheme = map[string]string{"http": "ws", "https": "wss"}[p.upstream.Scheme]
	up.Path = strings.TrimRight(p.upstream.Path, "/") + r.URL.Path
	up.RawQuery = r.URL.RawQuery
	connOpts := &wsconn.Options{WriteTimeout: LinkWriteTimeout}
	ctx := context.WithValue(r.Context(), sideKey{}, side)
	upstream, err := wsconn.Dial(ctx, up.String(), &wsconn.DialOptions{HTTPClient: p.wsClient, Conn: connOpts})
	if err != nil {
		var de *wsconn.DialError
		status := http.StatusBadGateway
		if errors.As(err, &de) && de.StatusCode != 0 {
			status = de.StatusCode
		}
		p.log.Debug("upstream refused a socket", "side", side.String(), "status", status)
		http.Error(w, "chaos: upstream refused the socket", status)
		return
	}
	client, err := wsconn.Accept(w, r, &wsconn.AcceptOptions{Conn: connOpts})
	if err != nil {
		_ = upstream.Close()
		return
	}
	l := newLink(side, client, upstream, p.judge)
	l.observe = p.observe
	p.mu.Lock()
	if p.closing {
		p.mu.Unlock()
		l.close()
		return
	}
	p.links[l] = struct{}{}
	p.linkCount.Add(1)
	p.mu.Unlock()
	p.log.Debug("link opened", "side", side.String())
	l.run(context.WithoutCancel(r.Context()))
	p.mu.Lock()
	delete(p.links, l)
	p.mu.Unlock()
	p.log.Debug("link closed", "side", side.String())
}
