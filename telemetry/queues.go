package telemetry

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/relay/mux"
)

// queues are the executor's queue-depth gauges. Nothing on the message or output path
// touches them: a scrape reads the depths from the Server (TrackQueues) and from each
// running mux (TrackMux), summed over connections, sessions, processes and sockets, so
// no id can become a label.
type queues struct {
	server atomic.Pointer[func() executor.QueueStats] // set by TrackQueues

	// muxMu guards muxes and muxSerial: the remote loop's socket goroutine adds and
	// removes, a scrape reads.
	muxMu     sync.Mutex
	muxes     map[uint64]func() mux.Stats
	muxSerial uint64
}

// TrackQueues makes the queue gauges report stats() (an executor.Server's QueueStats),
// read at each scrape. Call it once, before serving.
func (e *Executor) TrackQueues(stats func() executor.QueueStats) { e.q.server.Store(&stats) }

// TrackMux implements the remote loop's Observer: stats (a mux's Stats) is read at each
// scrape until untrack is called.
func (e *Executor) TrackMux(stats func() mux.Stats) (untrack func()) {
	e.q.muxMu.Lock()
	defer e.q.muxMu.Unlock()
	if e.q.muxes == nil {
		e.q.muxes = make(map[uint64]func() mux.Stats)
	}
	e.q.muxSerial++
	id := e.q.muxSerial
	e.q.muxes[id] = stats
	return func() {
		e.q.muxMu.Lock()
		delete(e.q.muxes, id)
		e.q.muxMu.Unlock()
	}
}

// relayOutbound sums the outbound queue depth of the tracked muxes.
func (q *queues) relayOutbound() int {
	q.muxMu.Lock()
	fs := make([]func() mux.Stats, 0, len(q.muxes))
	for _, f := range q.muxes {
		fs = append(fs, f)
	}
	q.muxMu.Unlock()
	n := 0
	for _, f := range fs { // outside muxMu: Stats takes the mux's lock
		n += f().Outbound
	}
	return n
}

// queueCollector exports the queue depths at scrape time.
type queueCollector struct {
	q     *queues
	descs []queueMetric
}

type queueMetric struct {
	desc  *prometheus.Desc
	value func(executor.QueueStats) int
}

func newQueueCollector(q *queues) *queueCollector {
	m := func(name, help string, v func(executor.QueueStats) int) queueMetric {
		return queueMetric{prometheus.NewDesc(name, help, nil, nil), v}
	}
	return &queueCollector{q: q, descs: []queueMetric{
		m("executor_rpc_outbound_queue_bytes", "Encoded JSON-RPC replies and notifications queued for the peers or being written, summed over connections (4 MiB budget per connection).",
			func(s executor.QueueStats) int { return s.RPC.OutboundBytes }),
		m("executor_rpc_outbound_queue_messages", "JSON-RPC messages waiting in the outbound queues, summed over connections (128 per connection).",
			func(s executor.QueueStats) int { return s.RPC.OutboundMessages }),
		m("executor_rpc_inbound_queue_bytes", "Raw bytes of JSON-RPC messages read and not yet dispatched, summed over connections (16 MiB budget per connection).",
			func(s executor.QueueStats) int { return s.RPC.InboundBytes }),
		m("executor_process_stdin_queue_bytes", "process/write bytes accepted and not yet written to the children, summed over processes (8 MiB per process).",
			func(s executor.QueueStats) int { return s.Process.StdinBytes }),
		m("executor_process_retained_output_bytes", "Output retained for process/read, summed over processes (released mode: 1 MiB each by default).",
			func(s executor.QueueStats) int { return s.Process.RetainedBytes }),
		m("executor_process_unacked_output_bytes", "Output of outputAck (lossless) processes retained until acknowledged, summed over processes (64 MiB bound each by default).",
			func(s executor.QueueStats) int { return s.Process.UnackedBytes }),
		m("executor_processes_blocked_at_bound", "outputAck processes whose unacknowledged output is at its bound: their output is not read and the child blocks.",
			func(s executor.QueueStats) int { return s.Process.BlockedAtBound }),
	}}
}

// relayOutboundDesc is the one gauge read from the muxes rather than the Server.
var relayOutboundDesc = prometheus.NewDesc("executor_relay_outbound_queue_frames",
	"Frames in the rendezvous sockets' outbound queues, summed over sockets (128 per socket).", nil, nil)

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d.desc
	}
	ch <- relayOutboundDesc
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	var s executor.QueueStats
	if f := c.q.server.Load(); f != nil {
		s = (*f)()
	}
	for _, d := range c.descs {
		ch <- prometheus.MustNewConstMetric(d.desc, prometheus.GaugeValue, float64(d.value(s)))
	}
	ch <- prometheus.MustNewConstMetric(relayOutboundDesc, prometheus.GaugeValue, float64(c.q.relayOutbound()))
}
