package chaos

import (
	"math/rand/v2"
	"time"
)

// Plan is the fault schedule as a pure state machine: inputs are the clock (now) and the
// bytes relayed, outputs are which faults have fired, whether a side is cut or stalled, and
// a verdict per frame. It does no I/O and starts nothing; the Proxy calls it under its own
// lock. Not safe for concurrent use.
type Plan struct {
	start   time.Time
	relayed int64
	faults  []scheduled
	rng     *rand.Rand
}

// scheduled is one fault and when it fired (zero: not yet).
type scheduled struct {
	Fault
	firedAt time.Time
}

// Verdict is what to do with one frame.
type Verdict struct {
	// Copies is how many times to forward it: 0 drops it, 2 duplicates it.
	Copies int
	// Delay is how long to hold it before forwarding (delay faults plus ReorderHold).
	Delay time.Duration
	// Reordered says ReorderHold is part of Delay.
	Reordered bool
}

// NewPlan returns a plan for faults, started at start, drawing frame faults from a PCG
// seeded with seed (the same seed and frame sequence give the same verdicts).
func NewPlan(faults []Fault, start time.Time, seed uint64) *Plan {
	p := &Plan{start: start, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	for _, f := range faults {
		p.faults = append(p.faults, scheduled{Fault: f})
	}
	return p
}

// Add schedules f (its trigger counts from the plan's start and bytes so far: a zero
// trigger fires at the next Advance). It reports false once MaxFaults are held.
func (p *Plan) Add(f Fault) bool {
	if len(p.faults) >= MaxFaults {
		return false
	}
	p.faults = append(p.faults, scheduled{Fault: f})
	return true
}

// Relayed counts n more bytes of frames relayed and reports whether a byte-triggered
// fault is now due (Advance fires it).
func (p *Plan) Relayed(n int) bool {
	p.relayed += int64(n)
	for i := range p.faults {
		s := &p.faults[i]
		if s.firedAt.IsZero() && s.AfterBytes > 0 && p.relayed >= s.AfterBytes {
			return true
		}
	}
	return false
}

// Advance fires every fault whose trigger is reached at now and returns them, in schedule
// order (the caller acts on cuts: closing the side's connections).
func (p *Plan) Advance(now time.Time) []Fault {
	var fired []Fault
	for i := range p.faults {
		s := &p.faults[i]
		if !s.firedAt.IsZero() {
			continue
		}
		if s.AfterBytes > 0 && p.relayed < s.AfterBytes {
			continue
		}
		if s.AfterBytes == 0 && now.Sub(p.start) < s.AfterTime {
			continue
		}
		s.firedAt = now
		fired = append(fired, s.Fault)
	}
	return fired
}

// NextTimer returns the earliest time at which a time-triggered fault fires or an active
// cut or stall ends, and false when there is none.
func (p *Plan) NextTimer(now time.Time) (time.Time, bool) {
	var next time.Time
	consider := func(t time.Time) {
		if t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, s := range p.faults {
		switch {
		case s.firedAt.IsZero() && s.AfterBytes == 0:
			consider(p.start.Add(s.AfterTime))
		case !s.firedAt.IsZero() && (s.Kind == KindCut || s.Kind == KindStall):
			consider(s.firedAt.Add(s.For))
		}
	}
	return next, !next.IsZero()
}

// active reports whether s applies to side at now.
func (s *scheduled) active(side Side, now time.Time) bool {
	if s.firedAt.IsZero() || s.Sides&side == 0 || now.Before(s.firedAt) {
		return false
	}
	return s.For == 0 || now.Before(s.firedAt.Add(s.For))
}

// Until returns when the latest active fault of kind (KindCut or KindStall) on side ends,
// or the zero time when side is not under one at now.
func (p *Plan) Until(kind Kind, side Side, now time.Time) time.Time {
	var until time.Time
	for i := range p.faults {
		s := &p.faults[i]
		if s.Kind != kind || !s.active(side, now) {
			continue
		}
		if end := s.firedAt.Add(s.For); end.After(until) {
			until = end
		}
	}
	return until
}

// Frame returns the verdict for one frame on side at now. data says whether it is a data
// frame: drop, duplicate and reorder faults apply to data frames only (handshakes and
// resets are the peers' control plane); delay faults apply to every frame, so order is
// kept. It draws from the plan's random source once per active probabilistic fault.
func (p *Plan) Frame(side Side, data bool, now time.Time) Verdict {
	v := Verdict{Copies: 1}
	for i := range p.faults {
		s := &p.faults[i]
		if !s.active(side, now) {
			continue
		}
		switch s.Kind {
		case KindDelay:
			v.Delay += s.Delay
		case KindDrop, KindDuplicate, KindReorder:
			if !data || p.rng.Float64() >= s.Rate {
				continue
			}
			switch s.Kind {
			case KindDrop:
				v.Copies = 0
			case KindDuplicate:
				if v.Copies > 0 {
					v.Copies = 2
				}
			default:
				v.Delay += ReorderHold
				v.Reordered = true
			}
		}
	}
	return v
}
