package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/execlab/executor/cmd/executor/internal/bench"
	"github.com/execlab/executor/internal/reexec"
)

// init registers `executor bench --internal-helper`, the bench's own helper process (not
// for users), as a re-entry point (internal/reexec): it holds the client sockets of the
// memory rows, driven over stdin/stdout by the bench that started it, until SIGINT or
// SIGTERM or its stdin's end.
func init() {
	reexec.Register(reexec.Point{Args: []string{"bench", bench.HelperArg}, Run: runBenchHelper})
}

func runBenchHelper([]string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := bench.RunHelper(ctx, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		return 1
	}
	return 0
}

// runBench is `executor bench`: the performance scoreboard against the reference.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("executor bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	reference := fs.String("reference", envOr("EXECUTOR_REFERENCE_BIN", ""),
		"reference codex binary (env EXECUTOR_REFERENCE_BIN; default: the scripts/install-reference.sh cache of the newest release, "+newestReference+")")
	ours := fs.String("ours", "", "executor binary to measure (default: this binary)")
	jsonPath := fs.String("json", "", "also write the rows as JSON to this file")
	quick := fs.Bool("quick", false, "small sizes and 2 runs per side (CI: checks numbers and data, seconds not minutes)")
	runs := fs.Int("runs", 0, fmt.Sprintf("measured samples per side and row (default %d, --quick %d; with --telemetry-overhead: on/off rounds, default %d)", bench.DefaultRuns, bench.QuickRuns, bench.DefaultOverheadRounds))
	overhead := fs.Bool("telemetry-overhead", false, "instead of the scoreboard, measure metrics + tracing on versus off on our executor (rows: "+
		strings.Join(bench.OverheadRows(), ", ")+"), alternating, with CPU time per operation; no reference needed")
	scrapeEvery := fs.Duration("scrape-interval", 0, "with --telemetry-overhead: how often the bench scrapes the on executor's /metrics (default 15s)")
	profileDir := fs.String("cpuprofile-dir", "", "with --telemetry-overhead: each executor writes a CPU profile to DIR/<row>-<off|on>.pprof")
	var only []string
	fs.Func("only", "run only these rows (repeatable, comma-separated; further arguments add rows): "+
		strings.Join(bench.RowNames(), ", "), func(v string) error {
		only = append(only, v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		if len(only) == 0 {
			return fmt.Errorf("%w: unexpected argument %q (rows go after --only)", errUsage, fs.Arg(0))
		}
		only = append(only, fs.Args()...)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this binary: %w", err)
	}
	oursBin := *ours
	if oursBin == "" {
		oursBin = exe
	}
	if *overhead {
		return runOverheadBench(ctx, bench.OverheadConfig{Ours: bench.OursTarget(oursBin), Only: only, Quick: *quick, Rounds: *runs,
			ScrapeInterval: *scrapeEvery, Progress: stderr, ProfileDir: *profileDir}, *jsonPath, stdout)
	}
	cfg := bench.Config{
		Ours:     bench.OursTarget(oursBin),
		Only:     only,
		Quick:    *quick,
		Runs:     *runs,
		Progress: stderr,
		Helper:   []string{exe, "bench", bench.HelperArg},
	}
	refBin := *reference
	if refBin == "" {
		refBin = cachedReference()
	}
	if refBin != "" {
		ref := bench.ReferenceTarget(refBin)
		cfg.Reference = &ref
	} else {
		fmt.Fprintln(stderr, "bench: no reference binary (use --reference or scripts/install-reference.sh); measuring ours only")
	}
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := bench.WriteTable(stdout, rep); err != nil {
		return err
	}
	if *jsonPath != "" {
		if err := writeJSONReport(*jsonPath, func(w io.Writer) error { return bench.WriteJSON(w, rep) }); err != nil {
			return err
		}
	}
	if failed := rep.Failed(); len(failed) > 0 {
		names := make([]string, len(failed))
		for i, r := range failed {
			names[i] = r.Row
		}
		return fmt.Errorf("bench: %d row(s) failed: %s", len(failed), strings.Join(names, ", "))
	}
	if ctx.Err() != nil {
		return errors.New("bench: interrupted")
	}
	return nil
}

// runOverheadBench is `executor bench --telemetry-overhead`: the table on stdout, the
// JSON to jsonPath when set; an error when a row failed.
func runOverheadBench(ctx context.Context, cfg bench.OverheadConfig, jsonPath string, stdout io.Writer) error {
	rep, err := bench.RunOverhead(ctx, cfg)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if err := bench.WriteOverheadTable(stdout, rep); err != nil {
		return err
	}
	if jsonPath != "" {
		if err := writeJSONReport(jsonPath, func(w io.Writer) error { return bench.WriteOverheadJSON(w, rep) }); err != nil {
			return err
		}
	}
	if rep.Failed() {
		return errors.New("bench: a telemetry overhead row failed")
	}
	if ctx.Err() != nil {
		return errors.New("bench: interrupted")
	}
	return nil
}

// writeJSONReport creates the file path and writes a report into it with write; an error
// creating, writing or closing it is a "writing JSON report" error.
func writeJSONReport(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing JSON report: %w", err)
	}
	werr := write(f)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("writing JSON report: %w", werr)
	}
	return nil
}

// newestReference is the newest reference release (scripts/install-reference.sh's default,
// refbin.Newest in tests): the one the bench measures against unless told otherwise.
const newestReference = "0.171.0"

// cachedReference finds the binary scripts/install-reference.sh installs (its default
// cache, pinned version: the newest release unless REFERENCE_CODEX_VERSION says otherwise),
// or returns "".
func cachedReference() string {
	version := envOr("REFERENCE_CODEX_VERSION", newestReference)
	dir := os.Getenv("REFERENCE_CODEX_DIR")
	if dir == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return ""
			}
			cache = filepath.Join(home, ".cache")
		}
		dir = filepath.Join(cache, "reference-codex", version)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "node_modules", "@openai", "*", "vendor", "*", "bin", "codex"))
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return m
		}
	}
	return ""
}
