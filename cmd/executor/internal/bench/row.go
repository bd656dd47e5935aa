package bench

import (
	"context"
	"fmt"
	"sort"
)

// Row is one figure of the scoreboard. Rows register themselves in init, one file each.
type Row struct {
	// Name is the stable key of the row in reports, e.g. "oneshot_local".
	Name string
	// Unit of a sample, e.g. "ms", "MiB/s", "MiB".
	Unit string
	// Goal decides whether the row is met.
	Goal Goal
	// Describe is one line for `executor bench -h` and docs.
	Describe string
	// Measure returns one sample for one side. Nil means the row is not yet available:
	// it is listed without numbers.
	Measure func(ctx context.Context, e *Env, side *Side) (float64, error)
	// OursOnly rows have no reference column: Measure runs for our side only and the
	// report's reference and ratio are null (in-process measurements, and figures the
	// reference has no counterpart for).
	OursOnly bool
}

// GoalKind says what a goal compares.
type GoalKind int

const (
	// RatioAtMost: ours/reference median ratio ≤ Value (lower is better).
	RatioAtMost GoalKind = iota + 1
	// RatioAtLeast: ours/reference median ratio ≥ Value (higher is better).
	RatioAtLeast
	// OursAtMost: our median ≤ Value, in the row's unit; the reference is informative.
	OursAtMost
	// OursAtLeast: our median ≥ Value, in the row's unit; the reference is informative.
	OursAtLeast
)

// Goal is a row's target; the zero Goal means "none yet".
type Goal struct {
	Kind  GoalKind
	Value float64
	// Also, when non-nil, must be met as well (e.g. an absolute rate and a ratio).
	Also *Goal
}

// String renders the goal for the table and JSON, e.g. "≤ 0.1× ref".
func (g Goal) String() string {
	if g.Also != nil {
		return g.one() + " and " + g.Also.String()
	}
	return g.one()
}

func (g Goal) one() string {
	switch g.Kind {
	case RatioAtMost:
		return fmt.Sprintf("≤ %g× ref", g.Value)
	case RatioAtLeast:
		return fmt.Sprintf("≥ %g× ref", g.Value)
	case OursAtMost:
		return fmt.Sprintf("≤ %g", g.Value)
	case OursAtLeast:
		return fmt.Sprintf("≥ %g", g.Value)
	}
	return "" // no goal yet

}

// met decides the goal; ok is false when it cannot be decided (no reference numbers for
// a ratio goal).
func (g Goal) met(ours Stats, ratio *float64) (met, ok bool) {
	if g.Also != nil {
		m1, ok1 := Goal{Kind: g.Kind, Value: g.Value}.met(ours, ratio)
		m2, ok2 := g.Also.met(ours, ratio)
		return m1 && m2, ok1 && ok2
	}
	switch g.Kind {
	case RatioAtMost:
		if ratio == nil {
			return false, false
		}
		return *ratio <= g.Value, true
	case RatioAtLeast:
		if ratio == nil {
			return false, false
		}
		return *ratio >= g.Value, true
	case OursAtMost:
		return ours.Median <= g.Value, true
	case OursAtLeast:
		return ours.Median >= g.Value, true
	}
	return false, false
}

// registry holds every row by name; filled by init functions, read-only afterwards.
var registry = map[string]Row{}

// register adds a row. A placeholder (nil Measure) and a measured row of the same name may
// both register, in any order: the measured one wins, so a row can land in its own file
// before its placeholder is removed. Any other duplicate is a programming error.
func register(r Row) {
	if old, dup := registry[r.Name]; dup {
		switch {
		case old.Measure == nil && r.Measure != nil:
		case old.Measure != nil && r.Measure == nil:
			return
		default:
			panic("bench: duplicate row " + r.Name)
		}
	}
	registry[r.Name] = r
}

// rowOrder is the order of the table: the order, then any other row by name.
var rowOrder = []string{
	"oneshot_local", "stdout_local", "readblock_local", "walk_local", "http_stream_local",
	"http_stream_rss", "handshakes", "relay_stream", "oneshot_remote", "rss_idle", "idle_stream_memory",
	"rendezvous_idle_memory", "sandboxed_oneshot",
}

// Rows returns every registered row in table order.
func Rows() []Row {
	seen := map[string]bool{}
	var out []Row
	for _, n := range rowOrder {
		if r, ok := registry[n]; ok {
			out = append(out, r)
			seen[n] = true
		}
	}
	var rest []string
	for n := range registry {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	for _, n := range rest {
		out = append(out, registry[n])
	}
	return out
}
