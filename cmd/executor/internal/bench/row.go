package bench

import (
	"context"
	"fmt"
)

// Row is one figure of the scoreboard. Every row is listed in rows (rows.go), in table
// order; its Measure lives in its own row_<name>.go.
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

// Rows returns every row in table order (rows.go). The slice is fresh: callers may keep it.
func Rows() []Row { return append([]Row(nil), rows...) }

// rowByName returns the row called name.
func rowByName(name string) (Row, bool) {
	for _, r := range rows {
		if r.Name == name {
			return r, true
		}
	}
	return Row{}, false
}
