package telemetry

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/execlab/executor/registry/api"
	"github.com/execlab/executor/registry/rendezvous"
	"github.com/execlab/executor/registry/server"
)

// Registry holds the metrics of `executor registry serve`: the registry API by endpoint
// and status, and the rendezvous Hub's counters. Create it with NewRegistry.
type Registry struct {
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	validations *prometheus.CounterVec
	locations   *prometheus.CounterVec
	renewals    *prometheus.CounterVec
}

var (
	_ server.Observer     = (*Registry)(nil)
	_ server.NodeObserver = (*Registry)(nil)
)

// registryEndpoints are the API endpoints measured; every other path (the rendezvous
// upgrades, /readyz, unknown paths) passes through unmeasured and unwrapped.
var registryEndpoints = []string{api.RegisterSuffix, api.ConnectSuffix, api.ValidateSuffix}

// registryCodes are the statuses pre-created per endpoint (the ones alerts watch).
var registryCodes = []int{200, 400, 401, 403, 404, 409, 429, 500, 503}

// httpBuckets are the registry API latency buckets, in seconds: 1 ms to 10 s (a store
// round trip, PostgreSQL or SQLite, dominates).
var httpBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// NewRegistryMetrics creates the registry API metrics and registers them with reg.
func NewRegistryMetrics(reg prometheus.Registerer) *Registry {
	r := &Registry{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "registry_requests_total",
			Help: "Registry API requests, by endpoint (register, connect, validate) and HTTP status (connect 409: executor offline; 429: harness token paused)."},
			[]string{"endpoint", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "registry_request_duration_seconds",
			Help: "Registry API request handling time, by endpoint.", Buckets: httpBuckets}, []string{"endpoint"}),
		validations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "registry_validations_total",
			Help: "Harness authorization validations, by outcome (valid, invalid: unknown, expired, replayed or mismatched; fenced; bad_request; error)."},
			[]string{"outcome"}),
	}
	r.locations = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "registry_location_changes_total",
		Help: "Executor location changes this node is party to, by reason (attached, attach_failed, detached, moved_away: closed here because another node took the location, stale_refused: a connect found a location that no longer stands)."},
		[]string{"reason"})
	r.renewals = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "registry_node_lease_renewals_total",
		Help: "Node lease renewals, by outcome (ok, error: store unreachable, lost: another process claimed this node id)."},
		[]string{"outcome"})
	reg.MustRegister(r.requests, r.latency, r.validations, r.locations, r.renewals)
	for _, reason := range []string{server.LocationAttached, server.LocationAttachFailed, server.LocationDetached, server.LocationMovedAway, server.LocationStaleRefused} {
		r.locations.WithLabelValues(reason)
	}
	for _, o := range []string{server.LeaseRenewed, server.LeaseRenewError, server.LeaseLost} {
		r.renewals.WithLabelValues(o)
	}
	for _, o := range []string{server.ValidateValid, server.ValidateInvalid, server.ValidateFenced, server.ValidateBadRequest, server.ValidateError} {
		r.validations.WithLabelValues(o)
	}
	for _, ep := range registryEndpoints {
		r.latency.WithLabelValues(ep)
		for _, c := range registryCodes {
			r.requests.WithLabelValues(ep, strconv.Itoa(c))
		}
	}
	return r
}

// Validated implements server.Observer.
func (r *Registry) Validated(outcome string) { r.validations.WithLabelValues(outcome).Inc() }

// LocationChanged implements server.NodeObserver.
func (r *Registry) LocationChanged(reason string) { r.locations.WithLabelValues(reason).Inc() }

// LeaseRenewal implements server.NodeObserver.
func (r *Registry) LeaseRenewal(outcome string) { r.renewals.WithLabelValues(outcome).Inc() }

// RegisterNode registers registry_node_lease_held, reading ready (a server.Node's Ready)
// at each scrape: 1 while the node holds its lease, 0 while its locations are not handed
// out (/readyz answers 503 then).
func RegisterNode(reg prometheus.Registerer, ready func() bool) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "registry_node_lease_held",
		Help: "1 while this registry node holds its lease (its executors are handed out), else 0."},
		func() float64 {
			if ready() {
				return 1
			}
			return 0
		}))
}

// Middleware measures the registry API requests handled by next. The status label is the
// status code (a closed set: net/http writes only valid codes, and the registry answers
// with a handful), so no path component, environment id or token reaches a label.
func (r *Registry) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, suffix, ok := api.SplitPath(req.URL.Path)
		if !ok || !knownEndpoint(suffix) {
			next.ServeHTTP(w, req)
			return
		}
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		start := time.Now()
		next.ServeHTTP(sw, req)
		r.requests.WithLabelValues(suffix, strconv.Itoa(sw.code)).Inc()
		r.latency.WithLabelValues(suffix).Observe(time.Since(start).Seconds())
	})
}

func knownEndpoint(suffix string) bool {
	for _, ep := range registryEndpoints {
		if suffix == ep {
			return true
		}
	}
	return false
}

// statusWriter records the status code written. Unwrap keeps http.ResponseController
// working; Hijack is forwarded for completeness (the measured endpoints never upgrade).
type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.code, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h, ok := w.ResponseWriter.(http.Hijacker); ok {
		return h.Hijack()
	}
	return nil, nil, errors.New("telemetry: hijacking not supported")
}

// hubCollector reads a Hub's Stats at scrape time.
type hubCollector struct {
	stats func() rendezvous.Stats
	descs []hubMetric
}

type hubMetric struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(rendezvous.Stats) int64
}

// RegisterHub registers the rendezvous counters of stats (a Hub's Stats method), read at
// each scrape.
func RegisterHub(reg prometheus.Registerer, stats func() rendezvous.Stats) {
	m := func(name, help string, kind prometheus.ValueType, v func(rendezvous.Stats) int64) hubMetric {
		return hubMetric{prometheus.NewDesc(name, help, nil, nil), kind, v}
	}
	g, c := prometheus.GaugeValue, prometheus.CounterValue
	reg.MustRegister(&hubCollector{stats: stats, descs: []hubMetric{
		m("rendezvous_executor_sockets", "Executor sockets online.", g, func(s rendezvous.Stats) int64 { return s.ExecutorSockets }),
		m("rendezvous_harness_sockets", "Harness sockets online.", g, func(s rendezvous.Stats) int64 { return s.HarnessSockets }),
		m("rendezvous_frames_relayed_total", "Frames queued to a socket, either direction.", c, func(s rendezvous.Stats) int64 { return s.FramesRelayed }),
		m("rendezvous_relayed_bytes_total", "Bytes of the frames relayed.", c, func(s rendezvous.Stats) int64 { return s.BytesRelayed }),
		m("rendezvous_frames_dropped_total", "Frames dropped: undecodable, invalid, non-binary, foreign or unknown stream.", c, func(s rendezvous.Stats) int64 { return s.Dropped }),
		m("rendezvous_slow_consumer_closes_total", "Harness sockets closed by the slow-consumer policy.", c, func(s rendezvous.Stats) int64 { return s.SlowConsumers }),
		m("rendezvous_claim_conflicts_total", "Harness sockets closed for claiming a stream id already held.", c, func(s rendezvous.Stats) int64 { return s.ClaimConflicts }),
		m("rendezvous_resets_sent_total", "Resets sent to executors for ended harness sockets.", c, func(s rendezvous.Stats) int64 { return s.ResetsSent }),
		m("rendezvous_upgrades_refused_total", "Socket upgrades refused by admission (used URL, caps, paused token, too many upgrades).", c, func(s rendezvous.Stats) int64 { return s.Refused }),
		m("rendezvous_harness_stream_failures_total", "Harness streams failed before any executor data, or for broken frame order.", c, func(s rendezvous.Stats) int64 { return s.HarnessFailures }),
	}})
}

func (c *hubCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d.desc
	}
}

func (c *hubCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	for _, d := range c.descs {
		ch <- prometheus.MustNewConstMetric(d.desc, d.kind, float64(d.value(s)))
	}
}
