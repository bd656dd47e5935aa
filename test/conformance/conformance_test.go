package conformance_test

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/internal/refbin"
)

var (
	ourBin  string
	httpURL string // base URL of the loopback HTTP fixture, ${HTTP} in scenarios

	refDiff = flag.Bool("refdiff", false, "TestReleases_Differences: replay every scenario against each "+
		"reference release (not ours) and report where the releases disagree")
)

// summaryPackage labels this package's lines in $EXECUTOR_TEST_SUMMARY.
const summaryPackage = "test/conformance"

func TestMain(m *testing.M) {
	flag.Parse()
	if err := os.MkdirAll("/var/tmp/executor-tests", 0o755); err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("/var/tmp/executor-tests", "bin-")
	if err != nil {
		panic(err)
	}
	ourBin, err = refbin.BuildExecutor(dir)
	if err != nil {
		panic("building executor: " + err.Error())
	}
	hs := newHTTPFixture()
	httpURL = hs.URL
	up, err := newTCPUpstreamFixture()
	if err != nil {
		panic("starting the TCP upstream fixture: " + err.Error())
	}
	tcpUpstreamAddr = up.ln.Addr().String()
	code := m.Run()
	hs.Close()
	up.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

// serverArgs are the listen flags of sc, for either binary.
func serverArgs(sc *Scenario) []string {
	args := []string{"--listen", "ws://127.0.0.1:0"}
	if sc.Concurrent > 0 {
		args = append(args, "--concurrent-requests", strconv.Itoa(sc.Concurrent))
	}
	if sc.TCPUpstream {
		args = append(args, "--tcp-upstream-proxy", tcpUpstreamAddr)
	}
	if sc.TransparentTCPFlag {
		args = append(args, "--linux-sandbox-transparent-tcp")
	}
	return args
}

func runReference(t *testing.T, sc *Scenario, r refbin.Release) *transcript {
	t.Helper()
	return run(t, sc, startServer(t, r.Path, append([]string{"exec-server"}, serverArgs(sc)...), codexHome(t, sc), sc))
}

func runOurs(t *testing.T, sc *Scenario) *transcript {
	t.Helper()
	return run(t, sc, startServer(t, ourBin, append([]string{"serve"}, serverArgs(sc)...), codexHome(t, sc), sc))
}

// codexHome is the CODEX_HOME for a server of sc: "" (startServer then uses
// ${TMP}/codex-home) when sc.CodexHomeInTmp, else a fresh directory of its own.
func codexHome(t *testing.T, sc *Scenario) string {
	if sc.CodexHomeInTmp {
		return ""
	}
	return refbin.CodexHome(t)
}

// TestScenarios_MatchReference replays every scenario against each reference release and
// against executor serve and requires identical normalized transcripts: subtests
// <scenario>/<release>. Ours runs once per scenario (its behaviour does not depend on the
// release it is compared with; only the normalization does) and again on a retry.
func TestScenarios_MatchReference(t *testing.T) {
	if executor.ExecutorVersion != refbin.Newest {
		t.Errorf("executor.ExecutorVersion is %q, want the newest release %q (ours behaves as it)", executor.ExecutorVersion, refbin.Newest)
	}
	releases := refbin.Releases(t)
	scenarios := loadScenarios(t)
	if len(scenarios) < 1 {
		t.Fatal("no scenarios")
	}
	tallies := map[string]*tally{}
	for _, r := range releases {
		tallies[r.Version] = &tally{}
	}
	for _, name := range sortedNames(scenarios) {
		sc := scenarios[name]
		// Sequential on purpose: scenarios rely on short sleeps, and running them in
		// parallel (on top of other packages' tests in CI) stretched those on 2 cores.
		t.Run(name, func(t *testing.T) {
			var ours *transcript // shared by the releases; nil until run
			for _, rel := range releases {
				t.Run(rel.Version, func(t *testing.T) {
					tl := tallies[rel.Version]
					adjusted := false
					defer func() { // also on Fatal and Skip (runtime.Goexit runs deferred calls)
						switch {
						case t.Failed():
							tl.differ = append(tl.differ, name)
						case t.Skipped():
							tl.notApplicable = append(tl.notApplicable, name)
						case adjusted:
							tl.adjusted = append(tl.adjusted, name)
						default:
							tl.identical++
						}
					}()
					if rr := sc.Releases[rel.Version]; rr != nil && rr.Skip != "" {
						t.Skipf("not applicable to %s: %s", rel.Version, rr.Skip)
					}
					adjusted = compareScenario(t, sc, rel, &ours)
				})
			}
		})
	}
	for _, v := range refbin.Versions {
		tl := tallies[v]
		if tl == nil {
			refbin.Record(summaryPackage, v, t.Name(), "skipped", "release unavailable")
			continue
		}
		status := "passed"
		if len(tl.differ) > 0 {
			status = "FAILED"
		}
		t.Logf("%s: %s", v, tl)
		refbin.Record(summaryPackage, v, t.Name(), status, tl.String())
	}
}

// compareScenario compares sc's transcript from release rel with ours (*ours, run when
// nil). A mismatch is replayed once on fresh servers of both: scenarios use short sleeps,
// and a loaded CI machine can stretch them on either side. A real difference shows twice;
// the first is logged either way. It reports whether a rule specific to rel was needed.
func compareScenario(t *testing.T, sc *Scenario, rel refbin.Release, ours **transcript) (adjusted bool) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		want, _, refProblems := render(sc, runReference(t, sc, rel), referenceSide(rel.Version))
		if *ours == nil || attempt > 1 {
			*ours = nil // a failed run leaves it unset for the next release
			*ours = runOurs(t, sc)
		}
		got, adj, ourProblems := render(sc, *ours, oursAgainst(rel.Version))
		for _, p := range refProblems {
			t.Errorf("reference %s: %s", rel.Version, p)
		}
		for _, p := range ourProblems {
			t.Errorf("ours: %s", p)
		}
		if strings.Join(got, "\n") == strings.Join(want, "\n") {
			return adj
		}
		diff := fmt.Sprintf("%s: transcripts differ from reference %s (attempt %d)\n%s--- reference %s\n%s\n--- ours\n%s",
			sc.Description, rel.Version, attempt, lineDiff(want, got, "reference", "ours"),
			rel.Version, strings.Join(want, "\n"), strings.Join(got, "\n"))
		if attempt == 2 {
			t.Error(diff)
			return adj
		}
		t.Log(diff)
	}
}

// refDiffAttempts is how often TestReleases_Differences replays a scenario whose
// reference transcripts differ before it reports the difference.
const refDiffAttempts = 3

// TestReleases_Differences is a debug mode (-args -refdiff): every scenario is replayed
// against each reference release — ours is not run — and the newest release's transcript,
// normalized as ours would be, is compared with each older one's. A difference must be
// declared: by the scenario's "releases" section for the older release (a skip, or a mask
// after which they agree) or by a systematic rule; an undeclared one fails. Raw
// differences (before any release rule) are logged with -v.
func TestReleases_Differences(t *testing.T) {
	if !*refDiff {
		t.Skip("debug mode: go test ./test/conformance -run TestReleases_Differences -v -args -refdiff")
	}
	releases := refbin.Releases(t)
	if len(releases) < 2 {
		t.Skip("needs at least two reference releases")
	}
	newest := releases[0]
	scenarios := loadScenarios(t)
	var undeclared, declared []string
	for _, name := range sortedNames(scenarios) {
		sc := scenarios[name]
		t.Run(name, func(t *testing.T) {
			for _, old := range releases[1:] {
				if rr := sc.Releases[old.Version]; rr != nil && rr.Skip != "" {
					declared = append(declared, name+" ("+old.Version+" skip)")
					t.Logf("not applicable to %s: %s", old.Version, rr.Skip)
					continue
				}
				for attempt := 1; ; attempt++ {
					newTr, oldTr := runReference(t, sc, newest), runReference(t, sc, old)
					rawNew, _, _ := render(sc, newTr, compareSide{wantVersion: newest.Version})
					rawOld, _, _ := render(sc, oldTr, compareSide{wantVersion: old.Version})
					if strings.Join(rawNew, "\n") == strings.Join(rawOld, "\n") {
						break
					}
					// The newest is normalized as ours would be when compared with old.
					gotNew, _, _ := render(sc, newTr, compareSide{release: old.Version, wantVersion: newest.Version, asNewest: true})
					gotOld, _, _ := render(sc, oldTr, referenceSide(old.Version))
					if strings.Join(gotNew, "\n") == strings.Join(gotOld, "\n") {
						t.Logf("%s and %s differ, covered by release rules:\n%s", newest.Version, old.Version,
							lineDiff(rawOld, rawNew, old.Version, newest.Version))
						declared = append(declared, name+" ("+old.Version+" rules)")
						break
					}
					if attempt < refDiffAttempts {
						continue // timing: replay (an ordered recv may race on a loaded machine)
					}
					undeclared = append(undeclared, name)
					t.Errorf("%s and %s differ and no release rule covers it:\n%s", newest.Version, old.Version,
						lineDiff(gotOld, gotNew, old.Version, newest.Version))
					break
				}
			}
		})
	}
	t.Logf("releases differ in %d scenarios covered by release rules: %s", len(declared), strings.Join(declared, ", "))
	t.Logf("releases differ in %d scenarios not covered: %s", len(undeclared), strings.Join(undeclared, ", "))
}
