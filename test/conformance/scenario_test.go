package conformance_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Scenario is one scripted exchange, stored as JSON:
//
//	{"description": "...",
//	 "files": {"rel/path": "content"},          // created under ${TMP} before the run
//	 "codexHomeInTmp": true,                    // CODEX_HOME=${TMP}/codex-home (created empty
//	                                            // before the server starts) instead of a
//	                                            // directory outside ${TMP}, so "files" can
//	                                            // write codex-home/config.toml
//	 "homeInTmp": true,                         // HOME=${TMP}/home (created empty)
//	 "filesBeforeStart": true,                  // lay files and setup before the servers start
//	 "tcpUpstreamProxy": true,                  // start the servers with --tcp-upstream-proxy
//	                                            // pointing at the CONNECT fixture
//	                                            // (upstream_fixture_test.go)
//	 "transparentTcpFlag": true,                // both servers get --linux-sandbox-transparent-tcp
//	 "setup": "ln -s a b; mkfifo f",            // sh script run in ${TMP} after files
//	 "steps": [
//	   {"send": {...}},                         // a JSON message (Text frame); ${TMP}, ${TMPURI}, ${SESSION},
//	                                            // ${HTTP} (fixture URL) and ${HTTPPORT} (its port) expanded,
//	                                            // and the large chunks of blocks_test.go (${BLOCK1M}, …)
//	   {"sendText": "not-json"},                // raw text (Text frame)
//	   {"sendBinary": {...}},                   // a JSON message in a Binary frame
//	   {"recv": 2},                             // receive 2 messages, compared in order
//	   {"recvSet": 3},                          // receive 3 messages, compared as a multiset
//	   {"recvUntil": "process/closed"},         // receive until that notification; compared as a multiset
//	   {"expectClosed": true},                  // the server closes the connection
//	   {"sleep": 100},                          // milliseconds
//	   {"reconnect": true},                     // close this socket, open a new one
//	   {"use": 1}                               // switch to connection 1 (opened on first use; 0 is the first)
//	 ],
//	 "mask": ["result.sessionId"],              // extra dotted paths masked in every message
//	 "releases": {                              // only where the reference releases differ, per release:
//	   "0.169.0": {"skip": "why"}}}             //   not applicable to it (skipped, counted, listed), or
//	                                            //   {"mask": ["error.message"], "reason": "why"}: paths
//	                                            //   masked (both sides) against that release only
//
// Every scenario runs against every reference release (refbin.Versions) and must match
// ours, which behaves as the newest. A scenario whose expected behaviour differs between
// releases says so per release in "releases", with a reason; systematic differences live
// in one table (systematicRules, releases_test.go).
type Scenario struct {
	Description string            `json:"description"`
	Files       map[string]string `json:"files"`
	Setup       string            `json:"setup"`
	Steps       []Step            `json:"steps"`
	Mask        []string          `json:"mask"`
	Concurrent  int               `json:"concurrentRequests"`
	// CodexHomeInTmp starts the servers with CODEX_HOME=${TMP}/codex-home, so that
	// files and setup can prepare its config.toml (environmentConfig/read scenarios)
	// and its path is scrubbed like every ${TMP} path.
	CodexHomeInTmp bool `json:"codexHomeInTmp"`
	// HomeInTmp starts the servers with HOME=${TMP}/home (created empty), so that files
	// can lay $HOME/.agents/skills (capabilities/discoverV2 scenarios).
	HomeInTmp bool `json:"homeInTmp"`
	// FilesBeforeStart lays files and runs setup before the servers start instead of
	// after: the reference builds its discoverV2 inventory at start and its watchers miss
	// trees created later (spec/capabilities-0.171.0.md §5).
	FilesBeforeStart bool `json:"filesBeforeStart"`
	// TCPUpstream starts the servers with `--tcp-upstream-proxy` pointing at the CONNECT
	// fixture (upstream_fixture_test.go).
	TCPUpstream bool `json:"tcpUpstreamProxy"`
	// TransparentTCPFlag starts both servers with --linux-sandbox-transparent-tcp
	// (codex 0.171.0; spec/network-proxy.md §8.3).
	TransparentTCPFlag bool `json:"transparentTcpFlag"`
	// MergeOutput folds the process/output chunks of each stream within a recvUntil batch
	// into one message and masks event seqs (after checking they are contiguous), for
	// scenarios whose read boundaries depend on scheduling (PTY echo, for one).
	MergeOutput bool `json:"mergeOutput"`
	// Releases holds what differs per reference release, keyed by version; a release
	// without a section must match exactly (after the systematic rules).
	Releases map[string]*ReleaseRule `json:"releases"`
}

// Step is one action of a scenario; exactly one field is set.
type Step struct {
	Send         json.RawMessage `json:"send,omitempty"`
	SendText     *string         `json:"sendText,omitempty"`
	SendBinary   json.RawMessage `json:"sendBinary,omitempty"`
	Recv         int             `json:"recv,omitempty"`
	RecvSet      int             `json:"recvSet,omitempty"`
	RecvUntil    string          `json:"recvUntil,omitempty"`
	ExpectClosed bool            `json:"expectClosed,omitempty"`
	Sleep        int             `json:"sleep,omitempty"`
	Reconnect    bool            `json:"reconnect,omitempty"`
	Use          *int            `json:"use,omitempty"`
}

func loadScenarios(t *testing.T) map[string]*Scenario {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scenarios found: %v", err)
	}
	out := make(map[string]*Scenario)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var s Scenario
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		name := strings.TrimSuffix(filepath.Base(p), ".json")
		if err := checkReleaseSections(name, &s); err != nil {
			t.Fatal(err)
		}
		out[name] = &s
	}
	return out
}

func sortedNames(m map[string]*Scenario) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (s Step) String() string {
	b, _ := json.Marshal(s)
	return fmt.Sprint(string(b))
}
