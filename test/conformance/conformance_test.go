package conformance_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/execlab/executor/internal/refbin"
)

var (
	ourBin  string
	httpURL string // base URL of the loopback HTTP fixture, ${HTTP} in scenarios
)

func TestMain(m *testing.M) {
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
	code := m.Run()
	hs.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestScenarios_MatchReference replays every scenario against the reference and against
// executor serve and requires identical normalized transcripts.
func TestScenarios_MatchReference(t *testing.T) {
	ref := refbin.Reference(t)
	scenarios := loadScenarios(t)
	if len(scenarios) < 1 {
		t.Fatal("no scenarios")
	}
	for _, name := range sortedNames(scenarios) {
		sc := scenarios[name]
		// Sequential on purpose: scenarios rely on short sleeps, and running them in
		// parallel (on top of other packages' tests in CI) stretched those on 2 cores.
		t.Run(name, func(t *testing.T) {
			args := []string{"--listen", "ws://127.0.0.1:0"}
			if sc.Concurrent > 0 {
				args = append(args, "--concurrent-requests", strconv.Itoa(sc.Concurrent))
			}
			// A mismatch is replayed once on fresh servers: scenarios use short sleeps, and
			// a loaded CI machine can stretch them on either side. A real difference shows
			// twice; the first is logged either way.
			for attempt := 1; ; attempt++ {
				refSrv := startServer(t, ref, append([]string{"exec-server"}, args...), refbin.CodexHome(t))
				want := run(t, sc, refSrv)
				ourSrv := startServer(t, ourBin, append([]string{"serve"}, args...), refbin.CodexHome(t))
				got := run(t, sc, ourSrv)
				if strings.Join(got, "\n") == strings.Join(want, "\n") {
					return
				}
				diff := fmt.Sprintf("%s: transcripts differ (attempt %d)\n--- reference\n%s\n--- ours\n%s", sc.Description,
					attempt, strings.Join(want, "\n"), strings.Join(got, "\n"))
				if attempt == 2 {
					t.Error(diff)
					return
				}
				t.Log(diff)
			}
		})
	}
}
