package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/executor/tunnel"
)

var (
	_ tunnel.Observer       = (*Executor)(nil)
	_ tunnel.ListenObserver = (*Executor)(nil)
	_ tunnel.ListenObserver = tracedObserver{}
)

// tunnelStatuses is the closed label set of executor_tunnel_opens_total.
var tunnelStatuses = []protocol.TunnelOpenStatus{protocol.TunnelOpened, protocol.TunnelRefused, protocol.TunnelFailed, protocol.TunnelInUse}

func newTunnelOpens() *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "executor_tunnel_opens_total",
		Help: "tunnel/open requests (port tunnels), by status (opened, refused by --tunnel-allow, failed to dial, connIdInUse)."}, []string{"status"})
	for _, s := range tunnelStatuses {
		v.WithLabelValues(string(s))
	}
	return v
}

// TunnelOpened implements tunnel.Observer.
func (e *Executor) TunnelOpened(status string) { e.tunnelOpens.WithLabelValues(status).Inc() }

// TunnelOpened forwards to the wrapped observer, so tracing does not hide the count.
func (o tracedObserver) TunnelOpened(status string) {
	if t, ok := o.Observer.(tunnel.Observer); ok {
		t.TunnelOpened(status)
	}
}

// tunnelListenEvents is the closed label set of executor_tunnel_listen_events_total.
var tunnelListenEvents = []string{tunnel.ListenEventListening, tunnel.ListenEventRefused, tunnel.ListenEventFailed, tunnel.ListenEventAccepted}

func newTunnelListen() *prometheus.CounterVec {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "executor_tunnel_listen_events_total",
		Help: "Remote listeners (tunnel/listen): requests by outcome (listening, refused by --tunnel-listen-allow, failed to bind) and accepted connections (accepted)."}, []string{"event"})
	for _, s := range tunnelListenEvents {
		v.WithLabelValues(s)
	}
	return v
}

// TunnelListenEvent implements tunnel.ListenObserver.
func (e *Executor) TunnelListenEvent(event string) { e.tunnelListen.WithLabelValues(event).Inc() }

// TunnelListenEvent forwards to the wrapped observer.
func (o tracedObserver) TunnelListenEvent(event string) {
	if t, ok := o.Observer.(tunnel.ListenObserver); ok {
		t.TunnelListenEvent(event)
	}
}
