package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
)

// WriteTable writes the human-readable scoreboard.
func WriteTable(w io.Writer, r *Report) error {
	fmt.Fprintf(w, "executor bench: %s, %d runs per side%s, took %s\n", r.Started.UTC().Format("2006-01-02 15:04:05 UTC"),
		r.Runs, map[bool]string{true: " (--quick sizes)", false: ""}[r.Quick], r.Duration.Round(100_000_000))
	fmt.Fprintf(w, "machine:   %s\n", r.Machine)
	fmt.Fprintf(w, "ours:      %s\n", r.Ours)
	if r.Reference != "" {
		fmt.Fprintf(w, "reference: %s\n", r.Reference)
	} else {
		fmt.Fprintf(w, "reference: none (ratios undecided)\n")
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "row\tunit\tours median [min–max]\treference median [min–max]\tratio\tgoal\tmet")
	for _, row := range r.Rows {
		switch row.Status {
		case StatusUnavailable:
			fmt.Fprintf(tw, "%s\t\tnot yet available\t\t\t\t\n", row.Row)
		case StatusSkipped:
			fmt.Fprintf(tw, "%s\t%s\tskipped: %s\t\t\t%s\t\n", row.Row, row.Unit, row.Error, row.Goal)
		case StatusFailed:
			fmt.Fprintf(tw, "%s\t%s\tFAILED: %s\t\t\t%s\t\n", row.Row, row.Unit, row.Error, row.Goal)
		default:
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", row.Row, row.Unit, fmtStats(row.Ours), fmtStats(row.Reference),
				fmtRatio(row.Ratio), row.Goal, map[bool]string{true: "yes", false: "no"}[row.Met])
		}
	}
	return tw.Flush()
}

func fmtStats(s *Stats) string {
	if s == nil {
		return "—"
	}
	return fmt.Sprintf("%s [%s–%s]", fmtNum(s.Median), fmtNum(s.Min), fmtNum(s.Max))
}

func fmtRatio(r *float64) string {
	if r == nil {
		return "—"
	}
	return fmtNum(*r) + "×"
}

// fmtNum prints about 3 significant digits, never with an exponent.
func fmtNum(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a >= 0.01:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', 5, 64)
}

// WriteJSON writes the rows as a JSON array of objects
// {"row","unit","ours":{"median","min","max","samples"}|null,"reference":{…}|null,
// "ratio","goal","met","status","error"?}.
func WriteJSON(w io.Writer, r *Report) error {
	rows := r.Rows
	if rows == nil {
		rows = []RowResult{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rows)
}
