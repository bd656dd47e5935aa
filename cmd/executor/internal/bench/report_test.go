package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestReport_RendersEveryStatus(t *testing.T) {
	ratio := 0.5
	rep := &Report{
		Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Runs: 5, Machine: "m", Ours: "ours serve",
		Rows: []RowResult{
			{Row: "a", Unit: "ms", Ours: &Stats{Median: 1, Min: 0.5, Max: 2, Samples: []float64{1}}, Reference: &Stats{Median: 2, Min: 2, Max: 2}, Ratio: &ratio, Goal: "≤ 0.1× ref"},
			{Row: "b", Status: StatusUnavailable},
			{Row: "c", Unit: "MiB/s", Status: StatusFailed, Error: "ours: lost or corrupted data", Goal: "≥ 5× ref"},
			{Row: "d", Unit: "ms", Status: StatusSkipped, Error: "d needs a database", Goal: "≤ 10"},
		},
	}
	rep.Rows[0].Status = StatusOK
	var table bytes.Buffer
	if err := WriteTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"2026-01-02 03:04:05 UTC", "machine:   m", "reference: none",
		"1.00 [0.500–2.00]", "0.500×", "not yet available", "FAILED: ours: lost or corrupted data", "skipped: d needs a database",
	} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(js.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	if got := rows[1]["ours"]; got != nil {
		t.Errorf("got ours %v for an unavailable row, want null", got)
	}
	if got := rows[2]["error"]; got != "ours: lost or corrupted data" {
		t.Errorf("got error %v, want the failure", got)
	}
	if got := rows[0]["ratio"]; got != 0.5 {
		t.Errorf("got ratio %v, want 0.5", got)
	}
}

func TestFmtNum(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{{1234.6, "1235"}, {47.6, "47.6"}, {1.234, "1.23"}, {0.0234, "0.023"}, {0.001234, "0.00123"}}
	for _, tc := range tests {
		if got := fmtNum(tc.in); got != tc.want {
			t.Errorf("fmtNum(%v): got %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDescribeMachine(t *testing.T) {
	if got := describeMachine(); !strings.Contains(got, "CPUs") {
		t.Errorf("got %q, want a CPU count", got)
	}
}
