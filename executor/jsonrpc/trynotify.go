package jsonrpc

// BestEffortReserve is how many outbound slots a best-effort notification leaves free:
// it is dropped when fewer than this many are (spec/network-proxy.md §7: the reference's
// network/policyDecision audit records), so that audit traffic never delays responses or
// process output.
const BestEffortReserve = 16

// TryNotify queues a best-effort notification without waiting. It reports false, and
// drops the notification, when the connection is shutting down, when fewer than
// BestEffortReserve outbound slots are free, or when the byte budget is short. Safe for
// concurrent use.
func (c *Conn) TryNotify(method string, params any) bool {
	select {
	case <-c.done:
		return false
	default:
	}
	b, err := encodeNotification(method, params)
	if err != nil {
		return false
	}
	c.qmu.Lock()
	if len(c.out)+BestEffortReserve > OutboundQueue || c.queued+len(b) > OutboundBytes {
		c.qmu.Unlock()
		return false
	}
	c.queued += len(b)
	c.out = append(c.out, b)
	c.qmu.Unlock()
	select {
	case c.pending <- struct{}{}:
	default:
	}
	return true
}
