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

// QueueStats is a snapshot of one connection's queues, for metrics (read at scrape time,
// never on the message path).
type QueueStats struct {
	// OutboundBytes are the encoded replies and notifications queued or being written
	// (bounded by OutboundBytes, one larger message aside).
	OutboundBytes int
	// OutboundMessages are the messages waiting in the outbound queue (at most
	// OutboundQueue).
	OutboundMessages int
	// InboundBytes are the raw bytes of messages read and not yet dispatched (bounded by
	// InboundBytes, one larger message aside).
	InboundBytes int
}

// Add returns the field-wise sum of q and o.
func (q QueueStats) Add(o QueueStats) QueueStats {
	return QueueStats{
		OutboundBytes:    q.OutboundBytes + o.OutboundBytes,
		OutboundMessages: q.OutboundMessages + o.OutboundMessages,
		InboundBytes:     q.InboundBytes + o.InboundBytes,
	}
}

// QueueStats returns the connection's queue depths. Safe for concurrent use; it takes the
// two queue locks briefly, one after the other.
func (c *Conn) QueueStats() QueueStats {
	c.qmu.Lock()
	out, msgs := c.queued, len(c.out)
	c.qmu.Unlock()
	c.imu.Lock()
	in := c.inQueued
	c.imu.Unlock()
	return QueueStats{OutboundBytes: out, OutboundMessages: msgs, InboundBytes: in}
}

// CallObserver is implemented by an Observer that also counts the server→client path
// (call.go), for metrics. Both methods
// are called outside every lock, must be cheap and safe for concurrent use.
type CallObserver interface {
	// BestEffortDropped is called when NotifyBestEffort dropped a notification (its
	// reserve was spent).
	BestEffortDropped()
	// CallRefused is called when Call failed with ErrTooManyCalls.
	CallRefused()
}
