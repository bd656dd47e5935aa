package telemetry

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/relay/mux"
)

// Executor holds the executor's metrics (serve and remote). It implements
// executor.Observer and, structurally, the remote loop's Observer (mux.Observer plus
// streams, handshakes, registrations and dials). Create it with NewExecutor.
type Executor struct {
	conns        prometheus.Gauge
	requests     *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	procsStarted prometheus.Counter
	procsExited  *prometheus.CounterVec
	denials      prometheus.Counter
	outputBytes  prometheus.Counter
	backpressure *prometheus.HistogramVec

	streams      prometheus.Gauge
	handshakes   *prometheus.CounterVec
	refused      *prometheus.CounterVec
	dropped      *prometheus.CounterVec
	cooldowns    prometheus.Counter
	registration *prometheus.CounterVec
	dials        *prometheus.CounterVec
	tunnelOpens  *prometheus.CounterVec // tunnel.go
	tunnelListen *prometheus.CounterVec // tunnel.go

	sessions atomic.Pointer[func() int] // set by TrackSessions; read at scrape time
	q        queues                     // queue depths, read at scrape time (queues.go)

	// byMethod caches each method's success counter and latency histogram (built by
	// precreate, read-only after): the per-request path skips the label hashing.
	byMethod map[string]methodMetrics
	// waits and exits cache the label-bound back-pressure histograms and exit counters
	// (built by precreate, read-only after), for the same reason.
	waits map[string]prometheus.Observer
	exits map[process.ExitClass]prometheus.Counter
}

type methodMetrics struct {
	ok      prometheus.Counter
	latency prometheus.Observer
}

var _ executor.Observer = (*Executor)(nil)
var _ mux.Observer = (*Executor)(nil)

// rpcBuckets are the request latency buckets, in seconds: 100 µs to 30 s (process/read
// long-polls up to its wait; most methods answer in well under a millisecond).
var rpcBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// waitBuckets are the back-pressure wait buckets, in seconds: 10 µs to 10 s.
var waitBuckets = []float64{.00001, .0001, .001, .01, .1, 1, 10}

// NewExecutor creates the executor metrics and registers them with reg.
func NewExecutor(reg prometheus.Registerer) *Executor {
	e := &Executor{
		conns: prometheus.NewGauge(prometheus.GaugeOpts{Name: "executor_connections_open",
			Help: "JSON-RPC connections being served (local WebSocket, stdio or relay streams)."}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "executor_rpc_requests_total",
			Help: "JSON-RPC requests handled, by method (\"other\" outside the method table) and result code (0 = success, else the JSON-RPC error code, \"closed\" = ended the connection)."},
			[]string{"method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "executor_rpc_request_duration_seconds",
			Help: "JSON-RPC request handling time, from dispatch to the handler's return (process/read includes its long-poll wait).", Buckets: rpcBuckets},
			[]string{"method"}),
		procsStarted: prometheus.NewCounter(prometheus.CounterOpts{Name: "executor_processes_started_total",
			Help: "Child processes spawned."}),
		procsExited: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "executor_processes_exited_total",
			Help: "Child processes reaped, by exit class (ok, error, signal, sandbox_denied)."}, []string{"class"}),
		denials: prometheus.NewCounter(prometheus.CounterOpts{Name: "executor_sandbox_denials_total",
			Help: "Sandboxed processes whose failure was classified as a sandbox denial."}),
		outputBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "executor_process_output_bytes_total",
			Help: "Bytes read from child processes' stdout, stderr and PTYs."}),
		backpressure: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "executor_backpressure_wait_seconds",
			Help: "Back-pressure waits, by queue: outbound (JSON-RPC replies and notifications waiting for a slow peer), inbound (the reader waiting for busy handlers), output_window (a lossless process's sender waiting for acknowledgements), output_bound (a lossless process's reader stopped at its unacknowledged bound), relay_outbound (stream writes waiting for a slow rendezvous socket).", Buckets: waitBuckets},
			[]string{"queue"}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{Name: "executor_relay_streams_open",
			Help: "Harness relay streams open (handshaking or established)."}),
		handshakes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "executor_relay_handshakes_total",
			Help: "Noise handshakes of harness streams, by outcome (ok, unauthorized, failed, capacity, cancelled)."}, []string{"outcome"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "executor_relay_handshakes_refused_total",
			Help: "Handshakes the stream multiplexer reset on its own, by reason."}, []string{"reason"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "executor_relay_frames_dropped_total",
			Help: "Relay frames dropped by the per-frame rules, by reason."}, []string{"reason"}),
		cooldowns: prometheus.NewCounter(prometheus.CounterOpts{Name: "executor_relay_cooldowns_total",
			Help: "Handshake cooldowns entered after the failure budget was spent."}),
		registration: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "executor_registry_registrations_total",
			Help: "Successful registrations with the registry (initial, reregister)."}, []string{"kind"}),
		dials: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "executor_rendezvous_dials_total",
			Help: "Rendezvous websocket dials, by outcome (ok, http_error, network_error)."}, []string{"outcome"}),
		tunnelOpens:  newTunnelOpens(),
		tunnelListen: newTunnelListen(),
	}
	reg.MustRegister(e.conns, e.requests, e.latency, e.procsStarted, e.procsExited, e.denials, e.outputBytes,
		e.backpressure, e.streams, e.handshakes, e.refused, e.dropped, e.cooldowns, e.registration, e.dials, e.tunnelOpens, e.tunnelListen,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "executor_sessions",
			Help: "Sessions alive (attached, or detached within their retention)."}, e.sessionCount),
		newQueueCollector(&e.q))
	e.precreate()
	return e
}

// precreate creates every series of the closed label sets at zero, so that rates and
// alerts see them from the first scrape and the series count is fixed from the start.
func (e *Executor) precreate() {
	e.byMethod = make(map[string]methodMetrics)
	for _, m := range append(executor.Methods(), "other") {
		e.byMethod[m] = methodMetrics{ok: e.requests.WithLabelValues(m, "0"), latency: e.latency.WithLabelValues(m)}
	}
	e.exits = make(map[process.ExitClass]prometheus.Counter)
	for _, c := range []process.ExitClass{process.ExitOK, process.ExitError, process.ExitSignal, process.ExitSandboxDenied} {
		e.exits[c] = e.procsExited.WithLabelValues(string(c))
	}
	e.waits = make(map[string]prometheus.Observer)
	for _, q := range []string{jsonrpc.QueueOutbound, jsonrpc.QueueInbound, process.QueueOutputWindow, process.QueueOutputBound, mux.QueueOutbound} {
		e.waits[q] = e.backpressure.WithLabelValues(q)
	}
	for _, o := range []string{"ok", "unauthorized", "failed", "capacity", "cancelled"} {
		e.handshakes.WithLabelValues(o)
	}
	for _, r := range []string{mux.RefusedDuplicatePending, mux.RefusedDuplicateActive, mux.RefusedCooldown, mux.RefusedCapacity, mux.RefusedEarlyData} {
		e.refused.WithLabelValues(r)
	}
	for _, r := range []string{mux.DropNonBinary, mux.DropMalformed, mux.DropInvalid, mux.DropUnknownBody, mux.DropUnencodable} {
		e.dropped.WithLabelValues(r)
	}
	for _, k := range []string{"initial", "reregister"} {
		e.registration.WithLabelValues(k)
	}
	for _, o := range []string{"ok", "http_error", "network_error"} {
		e.dials.WithLabelValues(o)
	}
}

// TrackSessions makes executor_sessions report count(). Call it once, before serving.
func (e *Executor) TrackSessions(count func() int) { e.sessions.Store(&count) }

func (e *Executor) sessionCount() float64 {
	count := e.sessions.Load()
	if count == nil {
		return 0
	}
	return float64((*count)())
}

// RequestHandled implements executor.Observer.
func (e *Executor) RequestHandled(method, code string, d time.Duration) {
	mm, ok := e.byMethod[method]
	if !ok { // not a label value the executor passes; counted as is
		e.requests.WithLabelValues(method, code).Inc()
		e.latency.WithLabelValues(method).Observe(d.Seconds())
		return
	}
	if code == "0" {
		mm.ok.Inc()
	} else {
		e.requests.WithLabelValues(method, code).Inc()
	}
	mm.latency.Observe(d.Seconds())
}

// ConnOpened implements executor.Observer.
func (e *Executor) ConnOpened() { e.conns.Inc() }

// ConnClosed implements executor.Observer.
func (e *Executor) ConnClosed() { e.conns.Dec() }

// Backpressure implements jsonrpc.Observer.
func (e *Executor) Backpressure(queue string, d time.Duration) {
	if o, ok := e.waits[queue]; ok {
		o.Observe(d.Seconds())
		return
	}
	e.backpressure.WithLabelValues(queue).Observe(d.Seconds())
}

// ProcessStarted implements process.Observer.
func (e *Executor) ProcessStarted() { e.procsStarted.Inc() }

// ProcessExited implements process.Observer.
func (e *Executor) ProcessExited(class process.ExitClass) {
	if c, ok := e.exits[class]; ok {
		c.Inc()
	} else {
		e.procsExited.WithLabelValues(string(class)).Inc()
	}
	if class == process.ExitSandboxDenied {
		e.denials.Inc()
	}
}

// OutputBytes implements process.Observer.
func (e *Executor) OutputBytes(n int) { e.outputBytes.Add(float64(n)) }

// FrameDropped implements mux.Observer.
func (e *Executor) FrameDropped(reason string) { e.dropped.WithLabelValues(reason).Inc() }

// HandshakeRefused implements mux.Observer.
func (e *Executor) HandshakeRefused(reason string) { e.refused.WithLabelValues(reason).Inc() }

// CooldownEntered implements mux.Observer.
func (e *Executor) CooldownEntered() { e.cooldowns.Inc() }

// StreamStarted implements the remote loop's Observer.
func (e *Executor) StreamStarted() { e.streams.Inc() }

// StreamEnded implements the remote loop's Observer.
func (e *Executor) StreamEnded() { e.streams.Dec() }

// Handshake implements the remote loop's Observer.
func (e *Executor) Handshake(outcome string) { e.handshakes.WithLabelValues(outcome).Inc() }

// Registered implements the remote loop's Observer.
func (e *Executor) Registered(again bool) {
	kind := "initial"
	if again {
		kind = "reregister"
	}
	e.registration.WithLabelValues(kind).Inc()
}

// RendezvousDial implements the remote loop's Observer.
func (e *Executor) RendezvousDial(outcome string) { e.dials.WithLabelValues(outcome).Inc() }
