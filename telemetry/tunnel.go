package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/executor/tunnel"
)

var _ tunnel.Observer = (*Executor)(nil)

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
