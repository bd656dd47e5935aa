package conformance_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/internal/refbin"
)

// Every scenario is compared with every reference release (refbin.Versions). Our server
// behaves as the newest release, so a difference between the releases shows up as a
// difference between ours and the older one. Such a difference is never absorbed
// silently; it is either
//
//   - systematic: one row of systematicRules below, documented and applied to every
//     scenario compared against that release; or
//   - specific to a scenario: the scenario's "releases" section says so for that release,
//     with a reason (ReleaseRule): "skip" (not applicable, logged, counted and listed in
//     the summary) or "mask" (extra paths masked against that release only).
//
// executorVersion is checked rather than masked blindly: the reference must report its own
// release (as `codex --version` prints it) and ours executor.ExecutorVersion, which must
// be the newest release; then the value is masked.

// ReleaseRule is what differs for one reference release in one scenario
// ("releases": {"0.169.0": {...}}). Exactly one of Skip and Mask is set.
type ReleaseRule struct {
	// Skip, when set, is why the scenario is not applicable to the release: it is not
	// run against it (the subtest is skipped, counted and listed in the summary).
	Skip string `json:"skip"`
	// Mask lists dotted paths masked in every message (ours and the reference's) when
	// comparing against the release, on top of the scenario's own mask.
	Mask []string `json:"mask"`
	// Reason says why Mask is needed; required with Mask.
	Reason string `json:"reason"`
}

func (r *ReleaseRule) validate() error {
	switch {
	case r == nil:
		return fmt.Errorf("empty release section")
	case (r.Skip != "") == (len(r.Mask) > 0):
		return fmt.Errorf("a release section sets exactly one of skip and mask")
	case len(r.Mask) > 0 && r.Reason == "":
		return fmt.Errorf("a release mask needs a reason")
	case r.Skip != "" && r.Reason != "":
		return fmt.Errorf("skip carries its own reason; drop reason")
	}
	return nil
}

// systematicRule is a documented difference between one release and ours, applied to
// every scenario compared against that release.
type systematicRule struct {
	release string // the reference release it applies to
	name    string
	why     string
	// apply adjusts one of our messages (r.method is the request it answers) and
	// reports whether it changed anything.
	apply func(r received) bool
}

// systematicRules is the one table of systematic release differences.
var systematicRules = []systematicRule{
	{
		release: "0.169.0",
		name:    "process/start error.data",
		why: "0.169.0 answers a failed process/start with {code, message}; 0.171.0, which ours follows, adds " +
			`"data":{"kind":K} with code and message unchanged (spec/changes-0.171.0.md). Against 0.169.0 the data ` +
			"is removed from our process/start errors before comparing; the reference's messages are left as they " +
			"are, so a 0.169.0 error that did carry data would still differ.",
		apply: func(r received) bool {
			e, ok := r.msg["error"].(map[string]any)
			if r.method != "process/start" || !ok {
				return false
			}
			if _, ok := e["data"]; !ok {
				return false
			}
			delete(e, "data")
			return true
		},
	},
}

// compareSide is how render treats a transcript.
type compareSide struct {
	release     string // the reference release being compared against ("" = none: no release rules)
	wantVersion string // the executorVersion this server must report
	asNewest    bool   // the server behaves as the newest release (ours): systematic rules apply
}

// oursAgainst and referenceSide are the two sides of a comparison with release v.
func oursAgainst(v string) compareSide {
	return compareSide{release: v, wantVersion: executor.ExecutorVersion, asNewest: true}
}
func referenceSide(v string) compareSide {
	return compareSide{release: v, wantVersion: v}
}

// render normalizes tr into comparable lines for side. It reports whether a rule specific
// to side.release (a systematic rule or the scenario's release mask) was applied, and any
// executorVersion that is not side.wantVersion.
func render(sc *Scenario, tr *transcript, side compareSide) (lines []string, adjusted bool, problems []string) {
	masks := sc.Mask
	if r := sc.Releases[side.release]; r != nil && len(r.Mask) > 0 {
		masks = append(append([]string(nil), masks...), r.Mask...)
		adjusted = true
	}
	for _, g := range tr.groups {
		if g.marker != "" {
			lines = append(lines, g.marker)
			continue
		}
		var got []string
		for _, r := range g.msgs {
			r.msg = deepCopy(r.msg)
			problems = append(problems, maskExecutorVersion(r.msg, side.wantVersion)...)
			if side.asNewest {
				for _, rule := range systematicRules {
					if rule.release == side.release && rule.apply(r) {
						adjusted = true
					}
				}
			}
			got = append(got, normalize(r.msg, tr.srv, masks))
		}
		if g.set {
			sort.Strings(got)
		}
		lines = append(lines, got...)
	}
	return lines, adjusted, problems
}

// maskExecutorVersion masks every executorVersion inside m's result (initialize's
// environmentInfo, environment/info) and returns a problem for each that is not want.
func maskExecutorVersion(m map[string]any, want string) []string {
	var problems []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if k == "executorVersion" {
					if e != want {
						problems = append(problems, fmt.Sprintf("executorVersion %v, want %q", e, want))
					}
					x[k] = "<executorVersion>"
					continue
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(m["result"])
	return problems
}

func deepCopy(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // m was decoded from JSON
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// lineDiff shows the lines of want and got that differ, by position (transcripts are
// aligned by step).
func lineDiff(want, got []string, wantName, gotName string) string {
	var b strings.Builder
	for i := 0; i < max(len(want), len(got)); i++ {
		w, g := "<none>", "<none>"
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			fmt.Fprintf(&b, "line %d\n  %s: %s\n  %s: %s\n", i+1, wantName, w, gotName, g)
		}
	}
	return b.String()
}

// tally counts one release's scenario outcomes for the summary line.
type tally struct {
	identical     int
	adjusted      []string // identical after a rule specific to the release
	notApplicable []string
	differ        []string
}

func (t *tally) String() string {
	parts := []string{fmt.Sprintf("%d identical", t.identical)}
	for _, p := range []struct {
		what  string
		names []string
	}{{"identical after release rules", t.adjusted}, {"not applicable", t.notApplicable}, {"differ", t.differ}} {
		if len(p.names) > 0 {
			parts = append(parts, fmt.Sprintf("%d %s (%s)", len(p.names), p.what, strings.Join(p.names, ", ")))
		}
	}
	return strings.Join(parts, ", ")
}

// checkReleaseSections rejects sections for releases we do not compare against.
func checkReleaseSections(name string, sc *Scenario) error {
	for v, r := range sc.Releases {
		known := false
		for _, k := range refbin.Versions {
			known = known || k == v
		}
		if !known {
			return fmt.Errorf("%s: release section %q: not one of %s", name, v, strings.Join(refbin.Versions, ", "))
		}
		if err := r.validate(); err != nil {
			return fmt.Errorf("%s: release section %q: %v", name, v, err)
		}
	}
	return nil
}
