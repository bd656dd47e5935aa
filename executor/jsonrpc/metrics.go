package jsonrpc

import "time"

// Observer receives a connection's back-pressure events, for metrics (cmd/executor wires
// Prometheus to it; this package never imports a metrics library). Implementations must
// be safe for concurrent use and cheap.
type Observer interface {
	// Backpressure is called after a wait for queue budget ended, with the queue
	// ("outbound": a reply or notification waited for OutboundBytes; "inbound": the read
	// loop waited for InboundBytes) and how long the wait lasted.
	Backpressure(queue string, d time.Duration)
}

// Queue names passed to Observer.Backpressure.
const (
	QueueOutbound = "outbound"
	QueueInbound  = "inbound"
)

// nopObserver is the Observer of a nil Options.Observer.
type nopObserver struct{}

func (nopObserver) Backpressure(string, time.Duration) {}
