package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// Telemetry overhead (issue 18, `executor bench --telemetry-overhead`): what metrics and
// tracing cost our executor on oneshot_local and relay_stream. The machine this runs on is
// usually shared, so a wall-clock comparison of two separate runs says little (medians of
// one setting moved by 25 % between runs). This mode is built to see a few percent anyway:
//
//   - the same workload runs against two executors started from the same binary, one with
//     telemetry off (EXECUTOR_METRICS_LISTEN empty, OTEL_SDK_DISABLED=true) and one with
//     it on (a metrics listener scraped every ScrapeInterval by the bench, and every span
//     exported over OTLP/HTTP to an in-process sink that accepts and discards);
//   - rounds alternate which setting goes first (off, on; on, off; …), so a load change
//     during the run hits both settings alike, and each round's on/off pair is compared;
//   - besides the row's own figure (ms or MiB/s), the executor's CPU time is read from
//     /proc/PID/stat (utime + stime, all threads, children excluded: as stdout_cpu) before
//     and after each sample: CPU per process started, or per GiB streamed. CPU time is far
//     less sensitive to other tenants than wall time; it is summed over all rounds so that
//     the 10 ms tick of /proc/PID/stat stays under 1 % of the total.
//
// The harness side (this process) and the registry it runs are the same for both settings
// and are not in the CPU figure.

// OverheadConfig selects what RunOverhead measures. It is never mutated.
type OverheadConfig struct {
	// Ours is our executor (OursTarget); each setting adds its environment to Ours.Env.
	Ours Target
	// Only restricts the run to these rows of OverheadRows; empty means all.
	Only []string
	// Quick selects small sizes and QuickRuns rounds (CI).
	Quick bool
	// Rounds is the number of measured on/off pairs per row (after one warm-up sample per
	// setting); 0 means DefaultOverheadRounds (QuickRuns with Quick).
	Rounds int
	// ScrapeInterval is how often the bench scrapes the "on" executor's /metrics while it
	// is measured; 0 means defaultScrapeInterval.
	ScrapeInterval time.Duration
	// Progress receives one line per sample; nil discards.
	Progress io.Writer
	// ProfileDir, when set, makes each executor write a CPU profile of its whole run to
	// ProfileDir/<row>-<off|on>.pprof (EXECUTOR_CPUPROFILE), to find what "on" costs.
	ProfileDir string
}

// DefaultOverheadRounds is the default number of on/off pairs per row.
const DefaultOverheadRounds = 8

// defaultScrapeInterval is 15 s, the scrape_interval of Prometheus's example
// configuration (its built-in default is 1 min). A scrape costs the executor a few
// milliseconds of CPU whatever its load (the process collector reads /proc, the text
// encoding of ~700 series): at 1 s that fixed cost is several percent of a lightly loaded
// row's CPU, which --scrape-interval 1s shows.
const defaultScrapeInterval = 15 * time.Second

// OverheadResult is one row of the overhead report; its JSON form is the --json schema.
type OverheadResult struct {
	Row     string `json:"row"`
	Unit    string `json:"unit"`     // the row's figure: ms (lower is better) or MiB/s
	CPUUnit string `json:"cpu_unit"` // CPU-ms/process or CPU-s/GiB
	Off     *Stats `json:"off"`      // the row's figure per round, telemetry off
	On      *Stats `json:"on"`       // the same, telemetry on
	CPUOff  *Stats `json:"cpu_off"`  // CPU per operation per round, off
	CPUOn   *Stats `json:"cpu_on"`   // the same, on
	// WallOverhead is the median over rounds of on's cost / off's cost − 1, where cost is
	// the latency (ms rows) or the time per byte (MiB/s rows): 0.02 means 2 % slower.
	WallOverhead float64 `json:"wall_overhead"`
	// CPUOverhead is on's CPU per operation / off's − 1, both summed over every round
	// (includes what runs now and then: scrapes, span exports, GC cycles).
	CPUOverhead float64 `json:"cpu_overhead"`
	// CPUPairedOverhead is the median over rounds of on's CPU per operation / off's − 1
	// (less sensitive to one slow sample; each sample's CPU is read in 10 ms ticks).
	CPUPairedOverhead float64 `json:"cpu_paired_overhead"`
	// Scrapes counts the successful /metrics scrapes of the "on" executor, Exports the
	// OTLP export requests the sink received from it: evidence that telemetry was on.
	Scrapes int `json:"scrapes"`
	Exports int `json:"exports"`
	// Error explains a failed row (empty when it was measured).
	Error string `json:"error,omitempty"`
}

// OverheadReport is the outcome of RunOverhead.
type OverheadReport struct {
	Started  time.Time
	Duration time.Duration
	Machine  string
	Ours     string
	Rounds   int
	Quick    bool
	// ScrapeInterval is how often the "on" executor was scraped.
	ScrapeInterval time.Duration
	Results        []OverheadResult
}

// Failed reports whether any row failed.
func (r *OverheadReport) Failed() bool {
	for _, res := range r.Results {
		if res.Error != "" {
			return true
		}
	}
	return false
}

// overheadRow is one workload of the overhead mode, reusing a scoreboard row's Measure.
type overheadRow struct {
	name    string
	cpuUnit string
	// lowerIsBetter: the figure is a latency (cost = figure), else a rate (cost = 1/figure).
	lowerIsBetter bool
	// repeat is how many Measure calls one round's sample makes (their figures' median is
	// the sample; their CPU is summed), so that a sample holds enough CPU time.
	repeat int
	// ops is the number of operations one Measure call performs, in cpuUnit's denominator.
	ops func(e *Env) float64
	// cpuScale converts CPU-seconds into cpuUnit's numerator.
	cpuScale float64
	// start makes sure the side's executor for this row runs and returns its pid.
	start func(ctx context.Context, e *Env, s *Side) (int, error)
}

var overheadRows = []overheadRow{
	{
		name: "oneshot_local", cpuUnit: "CPU-ms/process", lowerIsBetter: true, repeat: 10, cpuScale: 1000,
		ops: func(e *Env) float64 { return float64(quick(e, oneshotPerSample, oneshotPerSampleQuick)) },
		start: func(ctx context.Context, _ *Env, s *Side) (int, error) {
			if _, err := s.shared(ctx); err != nil {
				return 0, err
			}
			return s.inst.pid(), nil
		},
	},
	{
		name: "relay_stream", cpuUnit: "CPU-s/GiB", repeat: 1, cpuScale: 1,
		ops: func(e *Env) float64 { return float64(quick(e, relayStreamBytes, relayStreamBytesQuick)) / gibibyte },
		start: func(ctx context.Context, e *Env, s *Side) (int, error) {
			if _, err := s.remoteShared(ctx, e); err != nil {
				return 0, err
			}
			return s.remote.cmd.Process.Pid, nil
		},
	},
}

// OverheadRows returns the names of the rows the overhead mode measures.
func OverheadRows() []string {
	names := make([]string, len(overheadRows))
	for i, r := range overheadRows {
		names[i] = r.name
	}
	return names
}

// telemetryOffEnv turns metrics and tracing off whatever the bench's own environment says.
var telemetryOffEnv = []string{"EXECUTOR_METRICS_LISTEN=", "OTEL_SDK_DISABLED=true"}

// telemetryOnEnv turns metrics on at metricsAddr and exports every span to sinkURL.
func telemetryOnEnv(metricsAddr, sinkURL string) []string {
	return []string{
		"EXECUTOR_METRICS_LISTEN=" + metricsAddr,
		"OTEL_SDK_DISABLED=false",
		"OTEL_TRACES_EXPORTER=otlp",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + sinkURL + "/v1/traces",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf",
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
	}
}

// RunOverhead measures the selected rows with telemetry off and on, alternating. It
// returns an error only for a bad config (an unknown row); a failed row has its Error set.
func RunOverhead(ctx context.Context, cfg OverheadConfig) (*OverheadReport, error) {
	selected := map[string]bool{}
	for _, arg := range cfg.Only {
		for _, name := range strings.Split(arg, ",") {
			if name = strings.TrimSpace(name); name == "" {
				continue
			}
			if !isOverheadRow(name) {
				return nil, fmt.Errorf("unknown overhead row %q (rows: %s)", name, strings.Join(OverheadRows(), ", "))
			}
			selected[name] = true
		}
	}
	rounds := cfg.Rounds
	if rounds <= 0 {
		rounds = DefaultOverheadRounds
		if cfg.Quick {
			rounds = QuickRuns
		}
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if cfg.ScrapeInterval <= 0 {
		cfg.ScrapeInterval = defaultScrapeInterval
	}
	env := &Env{Quick: cfg.Quick}
	if p, err := exec.LookPath("head"); err == nil {
		env.headPath = p
	}
	defer env.close()
	rep := &OverheadReport{Started: time.Now(), Machine: describeMachine(), Ours: strings.Join(cfg.Ours.Argv, " "), Rounds: rounds, Quick: cfg.Quick,
		ScrapeInterval: cfg.ScrapeInterval}
	for _, row := range overheadRows {
		if len(selected) > 0 && !selected[row.name] {
			continue
		}
		res := runOverheadRow(ctx, env, cfg, row, rounds)
		rep.Results = append(rep.Results, res)
		if ctx.Err() != nil {
			break
		}
	}
	rep.Duration = time.Since(rep.Started)
	return rep, nil
}

func isOverheadRow(name string) bool {
	for _, r := range overheadRows {
		if r.name == name {
			return true
		}
	}
	return false
}

// setting is one of the two executors of a row: its side and what was measured of it.
type setting struct {
	name     string
	side     *Side
	figures  []float64 // the row's figure per round
	cpu      []float64 // CPU per operation per round
	cpuTotal time.Duration
	opsTotal float64
	scrapes  *scraper // nil for off
}

// runOverheadRow measures one row: a warm-up sample per setting, then rounds pairs in
// alternating order. Both executors are stopped before it returns.
func runOverheadRow(ctx context.Context, env *Env, cfg OverheadConfig, row overheadRow, rounds int) OverheadResult {
	r, _ := rowByName(row.name)
	res := OverheadResult{Row: row.name, Unit: r.Unit, CPUUnit: row.cpuUnit}
	sink, err := startOTLPSink()
	if err != nil {
		res.Error = err.Error()
		return res
	}
	defer sink.close()
	// The "on" executor's metrics address must be known before it starts, to be scraped:
	// a port free a moment ago (if another process takes it meanwhile, the executor fails
	// to start and the row reports it).
	metricsAddr, err := freeLoopbackAddr()
	if err != nil {
		res.Error = fmt.Sprintf("picking a metrics port: %v", err)
		return res
	}
	offEnv, onEnv := telemetryOffEnv, telemetryOnEnv(metricsAddr, sink.url)
	if cfg.ProfileDir != "" {
		offEnv = append(slices.Clip(offEnv), "EXECUTOR_CPUPROFILE="+filepath.Join(cfg.ProfileDir, row.name+"-off.pprof"))
		onEnv = append(onEnv, "EXECUTOR_CPUPROFILE="+filepath.Join(cfg.ProfileDir, row.name+"-on.pprof"))
	}
	off := &setting{name: "off", side: &Side{Target: withEnv(cfg.Ours, "off", offEnv)}}
	on := &setting{name: "on", side: &Side{Target: withEnv(cfg.Ours, "on", onEnv)}}
	on.scrapes = startScraper("http://"+metricsAddr+"/metrics", cfg.ScrapeInterval)
	err = measureSettings(ctx, env, cfg.Progress, row, rounds, off, on)
	on.scrapes.stop()
	// Stopping flushes the "on" executor's queued spans to the sink (at most 5 s).
	off.side.close()
	on.side.close()
	res.Scrapes, res.Exports = on.scrapes.count(), sink.requests()
	if err != nil {
		res.Error = err.Error()
		return res
	}
	fillOverhead(&res, row, off, on)
	return res
}

// measureSettings runs the warm-ups and the alternating rounds.
func measureSettings(ctx context.Context, env *Env, progress io.Writer, row overheadRow, rounds int, off, on *setting) error {
	for _, s := range []*setting{off, on} {
		if _, _, err := sampleSetting(ctx, env, row, s); err != nil {
			return fmt.Errorf("%s warm-up: %w", s.name, err)
		}
	}
	for i := range rounds {
		order := []*setting{off, on}
		if i%2 == 1 {
			order = []*setting{on, off}
		}
		for _, s := range order {
			fig, cpu, err := sampleSetting(ctx, env, row, s)
			if err != nil {
				return fmt.Errorf("%s round %d: %w", s.name, i+1, err)
			}
			perOp := cpu.Seconds() * row.cpuScale / (float64(row.repeat) * row.ops(env))
			s.figures = append(s.figures, fig)
			s.cpu = append(s.cpu, perOp)
			s.cpuTotal += cpu
			s.opsTotal += float64(row.repeat) * row.ops(env)
			fmt.Fprintf(progress, "overhead %s round %d %s: %s %s, %s %s\n", row.name, i+1, s.name,
				fmtNum(fig), mustUnit(row.name), fmtNum(perOp), row.cpuUnit)
		}
	}
	return nil
}

// sampleSetting runs row.repeat Measure calls on s and returns the median figure and the
// executor's CPU time meanwhile.
func sampleSetting(ctx context.Context, env *Env, row overheadRow, s *setting) (float64, time.Duration, error) {
	r, _ := rowByName(row.name)
	pid, err := row.start(ctx, env, s.side)
	if err != nil {
		return 0, 0, err
	}
	before, err := procCPU(pid)
	if err != nil {
		return 0, 0, err
	}
	figs := make([]float64, 0, row.repeat)
	for range row.repeat {
		v, err := r.Measure(ctx, env, s.side)
		if err != nil {
			return 0, 0, err
		}
		figs = append(figs, v)
	}
	after, err := procCPU(pid)
	if err != nil {
		return 0, 0, err
	}
	if p, err := row.start(ctx, env, s.side); err != nil || p != pid {
		return 0, 0, errors.New("the executor restarted during the sample")
	}
	return median(sortedCopy(figs)), after - before, nil
}

// fillOverhead computes the result's statistics and overheads from both settings.
func fillOverhead(res *OverheadResult, row overheadRow, off, on *setting) {
	so, sn := summarize(off.figures), summarize(on.figures)
	co, cn := summarize(off.cpu), summarize(on.cpu)
	res.Off, res.On, res.CPUOff, res.CPUOn = &so, &sn, &co, &cn
	res.WallOverhead = pairedOverhead(off.figures, on.figures, row.lowerIsBetter)
	res.CPUOverhead = cpuOverhead(off.cpuTotal, off.opsTotal, on.cpuTotal, on.opsTotal)
	res.CPUPairedOverhead = pairedOverhead(off.cpu, on.cpu, true)
}

// pairedOverhead is the median over rounds of cost(on)/cost(off) − 1, where cost is the
// figure itself when lower is better, else its inverse.
func pairedOverhead(off, on []float64, lowerIsBetter bool) float64 {
	n := min(len(off), len(on))
	ratios := make([]float64, 0, n)
	for i := range n {
		r := on[i] / off[i]
		if !lowerIsBetter {
			r = off[i] / on[i]
		}
		ratios = append(ratios, r)
	}
	return median(sortedCopy(ratios)) - 1
}

// cpuOverhead is on's total CPU per operation over off's, minus 1.
func cpuOverhead(offCPU time.Duration, offOps float64, onCPU time.Duration, onOps float64) float64 {
	if offCPU <= 0 || offOps <= 0 || onOps <= 0 {
		return math.NaN()
	}
	return (onCPU.Seconds()/onOps)/(offCPU.Seconds()/offOps) - 1
}

func sortedCopy(v []float64) []float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s
}

// withEnv returns t renamed (its remote environment id and home directories follow the
// name) with extra environment variables.
func withEnv(t Target, name string, env []string) Target {
	t.Name = t.Name + "-telemetry-" + name
	t.Env = append(append([]string(nil), t.Env...), env...)
	return t
}

func mustUnit(row string) string {
	r, _ := rowByName(row)
	return r.Unit
}

// scraper GETs a /metrics URL every interval until stop, counting successful scrapes, as
// a Prometheus server would. Owner: runOverheadRow, which calls stop.
type scraper struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// mu guards ok.
	mu sync.Mutex
	ok int
}

func startScraper(url string, interval time.Duration) *scraper {
	ctx, cancel := context.WithCancel(context.Background())
	s := &scraper{cancel: cancel}
	s.wg.Add(1)
	go func() { // routineScrape: ends when stop cancels ctx
		defer s.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if scrapeOnce(ctx, url, interval) == nil {
				s.mu.Lock()
				s.ok++
				s.mu.Unlock()
			}
		}
	}()
	return s
}

func (s *scraper) stop() {
	s.cancel()
	s.wg.Wait()
}

func (s *scraper) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ok
}
