package process

// QueueStats is a snapshot of a Manager's queues, summed over its processes, for metrics
// (read at scrape time, never on the output path). No process id is in it.
type QueueStats struct {
	// StdinBytes are process/write bytes accepted and not yet written to the children
	// (bounded per process by an 8 MiB queue).
	StdinBytes int
	// RetainedBytes is the output retained for process/read, every mode (released
	// processes: bounded by MaxRetainedBytes each).
	RetainedBytes int
	// UnackedBytes is the output of outputAck processes retained until acknowledged
	// (bounded by MaxUnackedBytes each).
	UnackedBytes int
	// BlockedAtBound counts the outputAck processes whose unacknowledged output is at its
	// bound: their reader has stopped and the child blocks in write(2).
	BlockedAtBound int
}

// Add returns the field-wise sum of q and o.
func (q QueueStats) Add(o QueueStats) QueueStats {
	return QueueStats{
		StdinBytes:     q.StdinBytes + o.StdinBytes,
		RetainedBytes:  q.RetainedBytes + o.RetainedBytes,
		UnackedBytes:   q.UnackedBytes + o.UnackedBytes,
		BlockedAtBound: q.BlockedAtBound + o.BlockedAtBound,
	}
}

// QueueStats sums the queues of the Manager's processes (running, and closed within their
// retention). Safe for concurrent use: it snapshots the table under m.mu, then takes each
// process's lock (and its stdin queue's) briefly, one at a time.
func (m *Manager) QueueStats() QueueStats {
	m.mu.Lock()
	procs := m.procsLocked()
	m.mu.Unlock()
	var s QueueStats
	for _, p := range procs {
		p.mu.Lock()
		s.RetainedBytes += p.out.bytes
		if p.ack != nil {
			s.UnackedBytes += p.ack.unackedBytes
			if p.ack.atBound(&p.out) {
				s.BlockedAtBound++
			}
		}
		q := p.stdin
		p.mu.Unlock()
		if q != nil {
			q.mu.Lock()
			s.StdinBytes += q.queued
			q.mu.Unlock()
		}
	}
	return s
}
