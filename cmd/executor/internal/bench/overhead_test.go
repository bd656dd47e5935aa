package bench

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPairedOverhead: each round's on/off pair gives one cost ratio (latency as is,
// throughput inverted), and the overhead is their median minus one.
func TestPairedOverhead(t *testing.T) {
	tests := []struct {
		name          string
		off, on       []float64
		lowerIsBetter bool
		want          float64
	}{
		{"latency, on slower", []float64{2, 4, 10}, []float64{2.2, 4.4, 11}, true, 0.1},
		{"throughput, on slower", []float64{100, 50}, []float64{80, 40}, false, 0.25},
		{"throughput, on faster", []float64{100}, []float64{125}, false, -0.2},
		{"median of pairs, not pair of medians", []float64{1, 1, 1}, []float64{1, 1.5, 3}, true, 0.5},
	}
	for _, tt := range tests {
		if got := pairedOverhead(tt.off, tt.on, tt.lowerIsBetter); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestCPUOverhead: total CPU per operation, on over off, minus one; undecided (NaN)
// without CPU or operations to divide by.
func TestCPUOverhead(t *testing.T) {
	if got := cpuOverhead(2*time.Second, 1000, 3*time.Second, 1400); math.Abs(got-(3.0/1400)/(2.0/1000)+1) > 1e-9 {
		t.Errorf("got %v, want %v", got, (3.0/1400)/(2.0/1000)-1)
	}
	if got := cpuOverhead(0, 10, time.Second, 10); !math.IsNaN(got) {
		t.Errorf("no CPU measured off: got %v, want NaN", got)
	}
}

// TestTelemetryEnv: the off setting switches metrics and tracing off whatever the bench's
// environment holds (later entries win in exec.Cmd.Env); the on setting names the metrics
// address and the sink; the target's own Env is kept and not aliased.
func TestTelemetryEnv(t *testing.T) {
	base := OursTarget("/bin/executor")
	base.Env = []string{"KEEP=1"}
	off := withEnv(base, "off", telemetryOffEnv)
	on := withEnv(base, "on", telemetryOnEnv("127.0.0.1:9", "http://127.0.0.1:8"))
	if off.Name == on.Name || off.Name == base.Name {
		t.Errorf("names: off %q, on %q, base %q: want distinct (they name the remote environments)", off.Name, on.Name, base.Name)
	}
	for _, want := range []string{"KEEP=1", "EXECUTOR_METRICS_LISTEN=", "OTEL_SDK_DISABLED=true"} {
		if !slices.Contains(off.Env, want) {
			t.Errorf("off env %q lacks %q", off.Env, want)
		}
	}
	for _, want := range []string{"KEEP=1", "EXECUTOR_METRICS_LISTEN=127.0.0.1:9", "OTEL_SDK_DISABLED=false",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://127.0.0.1:8/v1/traces"} {
		if !slices.Contains(on.Env, want) {
			t.Errorf("on env %q lacks %q", on.Env, want)
		}
	}
	if len(base.Env) != 1 {
		t.Errorf("base Env changed: %q", base.Env)
	}
}

// TestRunOverhead_Quick runs both overhead rows with --quick sizes against the executor
// built by TestMain: every round has a figure and a CPU figure for both settings, the
// "on" executor was scraped and exported spans to the sink, and the table prints. No
// timing assertions.
func TestRunOverhead_Quick(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var progress bytes.Buffer
	rep, err := RunOverhead(ctx, OverheadConfig{Ours: OursTarget(oursBin), Quick: true, ScrapeInterval: 50 * time.Millisecond, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != len(overheadRows) {
		t.Fatalf("got %d results, want %d", len(rep.Results), len(overheadRows))
	}
	for _, res := range rep.Results {
		if res.Error != "" {
			t.Errorf("%s: %s\nprogress:\n%s", res.Row, res.Error, progress.String())
			continue
		}
		for name, s := range map[string]*Stats{"off": res.Off, "on": res.On, "cpu_off": res.CPUOff, "cpu_on": res.CPUOn} {
			if s == nil || len(s.Samples) != rep.Rounds || s.Min <= 0 && name[:3] != "cpu" {
				t.Errorf("%s %s: got %+v, want %d positive samples", res.Row, name, s, rep.Rounds)
			}
		}
		if res.Scrapes < 1 || res.Exports < 1 {
			t.Errorf("%s: %d scrapes and %d OTLP exports of the on executor, want >= 1 each (telemetry was not on)", res.Row, res.Scrapes, res.Exports)
		}
	}
	var table bytes.Buffer
	if err := WriteOverheadTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	for _, row := range OverheadRows() {
		if !strings.Contains(table.String(), row) {
			t.Errorf("table lacks %s:\n%s", row, table.String())
		}
	}
	t.Logf("\n%s", table.String())
}

// TestRunOverhead_UnknownRow: a row outside OverheadRows is a config error.
func TestRunOverhead_UnknownRow(t *testing.T) {
	if _, err := RunOverhead(context.Background(), OverheadConfig{Ours: OursTarget(oursBin), Only: []string{"stdout_local"}}); err == nil {
		t.Fatal("RunOverhead with row stdout_local: got nil error, want unknown row")
	}
}
