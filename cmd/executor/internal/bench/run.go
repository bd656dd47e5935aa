package bench

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// Config selects what Run measures. It is never mutated.
type Config struct {
	// Ours starts our executor (`executor serve --listen ws://127.0.0.1:0`).
	Ours Target
	// Reference starts `codex exec-server --listen ws://127.0.0.1:0`; nil runs our side
	// only (ratio goals are then undecided and reported as unmet).
	Reference *Target
	// Only restricts the run to these row names; empty means every row.
	Only []string
	// Quick selects small sizes and QuickRuns (CI).
	Quick bool
	// Runs is the number of measured samples per side; 0 means DefaultRuns (QuickRuns
	// with Quick).
	Runs int
	// Progress receives one line per sample; nil discards.
	Progress io.Writer
	// Helper is the argv prefix that runs this package's helper process (RunHelper), e.g.
	// {"/path/to/executor", "bench", HelperArg}: the memory rows hold their client sockets
	// in it so that they are not counted with what is measured. Empty fails those rows.
	Helper []string
}

// withShared prepares a row's fixture (created on first use, not timed), then returns it
// with the side's shared session.
func withShared[T any](ctx context.Context, side *Side, fixture func() (T, error)) (T, *session, error) {
	f, err := fixture()
	if err != nil {
		return f, nil, err
	}
	sess, err := side.shared(ctx)
	return f, sess, err
}

// quick is full, or q with --quick (Env.Quick): a row's size or count.
func quick[T any](e *Env, full, q T) T {
	if e.Quick {
		return q
	}
	return full
}

// Env is what rows may read about the run, and the fixtures rows share during it (a large
// file, a directory tree, a loopback HTTP server, a registry), created on first use and
// released when Run returns.
type Env struct {
	// Quick is Config.Quick: rows pick their small sizes.
	Quick bool
	// headPath is the absolute path of head(1), for stdout_local and relay_stream.
	headPath string
	// helper is Config.Helper.
	helper []string

	// Shared fixtures, each nil until first use; only the measuring goroutine touches them.
	blockFile   *blockFile       // readblock_local
	writeBlocks *writeBlocks     // writeblock_local
	walkTree    *walkTree        // walk_local
	httpSrv     *httpServer      // http_stream_local, http_stream_rss
	registry    *benchRegistry   // relay_stream, oneshot_remote
	greeter     *greeter         // proxy_setup, proxy_idle_memory
	digests     map[int64]string // body SHA-256 by size (proxy_cpu)
	// closers release the fixtures, in reverse order of creation.
	closers []func()
}

// onClose registers f to run when Run returns (after every side has been closed).
func (e *Env) onClose(f func()) { e.closers = append(e.closers, f) }

func (e *Env) close() {
	for i := len(e.closers) - 1; i >= 0; i-- {
		e.closers[i]()
	}
	e.closers = nil
}

// Side is one executor under measurement during Run. Rows use Shared for a long-lived
// instance and session, or startInstance for a fresh one they stop themselves.
type Side struct {
	Target Target
	inst   *instance
	sess   *session
	ids    int
	// remote is the side's executor registered with Env.registry (relay rows), and
	// remoteSess a harness connection to it through the rendezvous; nil until first use.
	remote     *remoteInstance
	remoteSess *session
}

// shared returns the side's long-lived session, (re)starting its executor when needed.
func (s *Side) shared(ctx context.Context) (*session, error) {
	if s.sess != nil {
		select {
		case <-s.sess.client.Done():
			s.close() // the connection died: start over
		default:
			return s.sess, nil
		}
	}
	inst, sess, err := startConnected(ctx, s.Target)
	if err != nil {
		return nil, err
	}
	s.inst, s.sess = inst, sess
	return sess, nil
}

// processID returns a process id never used before on this side.
func (s *Side) processID(row string) string {
	s.ids++
	return fmt.Sprintf("bench-%s-%d", row, s.ids)
}

func (s *Side) close() {
	s.closeRemote()
	if s.sess != nil {
		s.sess.close()
		s.sess = nil
	}
	if s.inst != nil {
		s.inst.stop()
		s.inst = nil
	}
}

// Row statuses in a Report.
const (
	StatusOK          = "ok"
	StatusUnavailable = "not yet available"
	StatusFailed      = "failed"
)

// RowResult is one row of the report; its JSON form is the --json schema.
type RowResult struct {
	Row       string   `json:"row"`
	Unit      string   `json:"unit"`
	Ours      *Stats   `json:"ours"`
	Reference *Stats   `json:"reference"`
	Ratio     *float64 `json:"ratio"`
	Goal      string   `json:"goal"`
	Met       bool     `json:"met"`
	// Status is StatusOK, StatusUnavailable, StatusSkipped or StatusFailed.
	Status string `json:"status"`
	// Error explains a failed row, or why a skipped row was not measured.
	Error string `json:"error,omitempty"`
}

// Report is the outcome of Run.
type Report struct {
	Started   time.Time
	Duration  time.Duration
	Quick     bool
	Runs      int
	Machine   string // CPU model, CPU count, memory
	Ours      string // argv of our executor
	Reference string // argv of the reference, "" when none
	Rows      []RowResult
}

// Failed returns the rows that failed (an error or lost data).
func (r *Report) Failed() []RowResult {
	var out []RowResult
	for _, row := range r.Rows {
		if row.Status == StatusFailed {
			out = append(out, row)
		}
	}
	return out
}

// Run measures the selected rows. It returns an error only for a bad Config (an unknown
// row name); failures of individual rows are in the Report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	selected, err := selectRows(cfg.Only)
	if err != nil {
		return nil, err
	}
	runs := cfg.Runs
	if runs <= 0 {
		runs = DefaultRuns
		if cfg.Quick {
			runs = QuickRuns
		}
	}
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	env := &Env{Quick: cfg.Quick, helper: cfg.Helper}
	if p, err := exec.LookPath("head"); err == nil {
		env.headPath = p
	}
	rep := &Report{Started: time.Now(), Quick: cfg.Quick, Runs: runs, Machine: describeMachine(), Ours: strings.Join(cfg.Ours.Argv, " ")}
	sides := []*Side{{Target: cfg.Ours}}
	if cfg.Reference != nil {
		rep.Reference = strings.Join(cfg.Reference.Argv, " ")
		sides = append(sides, &Side{Target: *cfg.Reference})
	}
	defer func() {
		for _, s := range sides {
			s.close()
		}
		env.close()
	}()
	for _, row := range Rows() {
		res := RowResult{Row: row.Name, Unit: row.Unit, Goal: row.Goal.String()}
		switch {
		case !selected[row.Name]:
			continue
		case row.Measure == nil:
			res.Status = StatusUnavailable
		default:
			measureRow(ctx, env, row, sides, runs, progress, &res)
		}
		rep.Rows = append(rep.Rows, res)
	}
	rep.Duration = time.Since(rep.Started)
	return rep, nil
}

// measureRow runs one warm-up sample per side, then runs samples alternating sides. An
// OursOnly row measures the first side (ours) only.
func measureRow(ctx context.Context, env *Env, row Row, sides []*Side, runs int, progress io.Writer, res *RowResult) {
	if row.OursOnly {
		sides = sides[:1]
	}
	samples := make([][]float64, len(sides))
	for i := -1; i < runs; i++ {
		for si, side := range sides {
			label := fmt.Sprintf("%d/%d", i+1, runs)
			if i < 0 {
				label = "warm-up"
			}
			var v float64
			err := ctx.Err() // an interrupted run starts no more samples
			if err == nil {
				v, err = row.Measure(ctx, env, side)
			}
			if reason, ok := asPrerequisite(err); ok {
				fmt.Fprintf(progress, "bench: %s: skipped: %s\n", row.Name, reason)
				res.Status = StatusSkipped
				res.Error = reason
				return
			}
			if err != nil {
				fmt.Fprintf(progress, "bench: %s %s %s: FAILED: %v\n", row.Name, side.Target.Name, label, err)
				res.Status = StatusFailed
				res.Error = fmt.Sprintf("%s: %v", side.Target.Name, err)
				return
			}
			fmt.Fprintf(progress, "bench: %s %s %s: %.3f %s\n", row.Name, side.Target.Name, label, v, row.Unit)
			if i >= 0 {
				samples[si] = append(samples[si], v)
			}
		}
	}
	ours := summarize(samples[0])
	res.Ours = &ours
	if len(sides) > 1 {
		ref := summarize(samples[1])
		res.Reference = &ref
		if ref.Median != 0 {
			ratio := ours.Median / ref.Median
			res.Ratio = &ratio
		}
	}
	res.Met, _ = row.Goal.met(ours, res.Ratio)
	res.Status = StatusOK
}

// selectRows validates the names in only (comma-separated lists allowed).
func selectRows(only []string) (map[string]bool, error) {
	sel := map[string]bool{}
	if len(only) == 0 {
		for _, r := range rows {
			sel[r.Name] = true
		}
		return sel, nil
	}
	for _, o := range only {
		for _, n := range strings.Split(o, ",") {
			n = strings.TrimSpace(n)
			if n == "" {
				continue
			}
			if _, ok := rowByName(n); !ok {
				return nil, fmt.Errorf("unknown row %q (rows: %s)", n, strings.Join(RowNames(), ", "))
			}
			sel[n] = true
		}
	}
	return sel, nil
}

// RowNames lists every row name in table order.
func RowNames() []string {
	var out []string
	for _, r := range Rows() {
		out = append(out, r.Name)
	}
	return out
}
