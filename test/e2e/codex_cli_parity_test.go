package e2e_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
)

// The real codex CLI recorded against the reference exec-server and against ours in the same
// run (issue 28): the same scripted session goes through a wsTap to each, and the two
// recordings are compared method by method.

// executorEnv is the environment an exec-server runs in (its HOME, CODEX_HOME and TMPDIR,
// not the CLI's), under one base directory outside /tmp (the reference refuses to set up
// its sandbox helpers there).
type executorEnv struct {
	home, codexHome, tmp string
}

func newExecutorEnv(t *testing.T) executorEnv {
	t.Helper()
	base := refbin.CodexHome(t)
	e := executorEnv{home: filepath.Join(base, "home"), codexHome: filepath.Join(base, "home", ".codex"), tmp: filepath.Join(base, "tmp")}
	for _, d := range []string{e.home, e.codexHome, e.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e executorEnv) vars() []string {
	return []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + e.home, "TMPDIR=" + e.tmp, "CODEX_HOME=" + e.codexHome}
}

// startOursIn and startReferenceIn start `executor serve` (with extra arguments) and rel's
// `codex exec-server` in env.
func startOursIn(t *testing.T, env executorEnv, extra ...string) *execServer {
	t.Helper()
	return startExecServer(t, "executor serve", remoteExecutorBin(t), env.vars(),
		append([]string{"serve", "--listen", "ws://127.0.0.1:0", "--log-level", "debug"}, extra...)...)
}

// referenceHelperDir is the directory rel's exec-server advertises as prependPathDirs: its
// package's codex-path (ripgrep), beside bin/ (capabilities-0.171.0.md §12.2); "" if absent.
func referenceHelperDir(rel refbin.Release) string {
	d := filepath.Join(filepath.Dir(filepath.Dir(rel.Path)), "codex-path")
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		return ""
	}
	return d
}

// prependPathDirs is the prependPathDirs member of the session's initialize result, as JSON
// ("" when absent).
func (s cliSession) prependPathDirs() string {
	for _, c := range s.calls() {
		if c.Method != "initialize" {
			continue
		}
		var r struct {
			EnvironmentInfo struct {
				PrependPathDirs json.RawMessage `json:"prependPathDirs"`
			} `json:"environmentInfo"`
		}
		_ = json.Unmarshal(c.Result, &r) // absent or malformed: ""
		return string(r.EnvironmentInfo.PrependPathDirs)
	}
	return ""
}

func startReferenceIn(t *testing.T, rel refbin.Release, env executorEnv) *execServer {
	t.Helper()
	return startExecServer(t, "codex "+rel.Version+" exec-server", rel.Path, env.vars(),
		"exec-server", "--listen", "ws://127.0.0.1:0")
}

// newGitWorkspace makes an empty git repository (a project root for the CLI's discovery).
func newGitWorkspace(t *testing.T) string {
	t.Helper()
	work := filepath.Join(refbin.CodexHome(t), "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "init", "-q", work)
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + work, "GIT_CONFIG_NOSYSTEM=1"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	return work
}

// cliSession is one recorded `codex exec` run.
type cliSession struct {
	server   string
	stdout   string
	stderr   string
	runErr   error
	requests []modelRequest
	problems string
	msgs     []tappedMessage
}

// runRecordedSession runs `codex exec -s workspace-write` (release rel) in work against srv
// through a wsTap, with model as its model and a CLI home of its own, and returns the
// recording once the CLI has exited.
func runRecordedSession(t *testing.T, rel refbin.Release, srv *execServer, work string, model *scriptedModel) cliSession {
	t.Helper()
	h := newCLIHome(t) // its work directory is unused: the session runs in work
	writeScriptedModelConfig(t, h.codexHome, model, "")
	tap := startWSTap(t, srv.url)
	env := h.env("CODEX_EXEC_SERVER_URL=" + tap.URL())
	stdout, stderr, runErr := runCodexCLI(rel, work, env, 60*time.Second, "--strict-config", "--skip-git-repo-check", "--ephemeral",
		"--color", "never", "-C", work, "-s", "workspace-write", "Run the command the script asks for.")
	reqs, problems := model.snapshot()
	tap.Close() // every frame the CLI exchanged is recorded once its connections are closed
	return cliSession{server: srv.name, stdout: stdout, stderr: stderr, runErr: runErr,
		requests: reqs, problems: problems, msgs: tap.exchange()}
}

// rpcCall is one client→server request or notification of a recording, with the server's
// answer: Result, or ErrCode and ErrMsg (both zero for a result and for a notification).
type rpcCall struct {
	Method   string
	ID       string // "" for a notification
	Answered bool
	ErrCode  int
	ErrMsg   string
	Params   json.RawMessage
	Result   json.RawMessage
}

func (c rpcCall) failed() bool { return c.ErrMsg != "" || c.ErrCode != 0 }

// calls lists the client's requests and notifications in the order the CLI sent them.
func (s cliSession) calls() []rpcCall {
	var out []rpcCall
	for _, m := range s.msgs {
		if !m.FromClient || m.Bad != nil || m.Msg.Method == "" {
			continue
		}
		c := rpcCall{Method: m.Msg.Method, Params: m.Msg.Params}
		if len(m.Msg.ID) > 0 {
			c.ID = string(m.Msg.ID)
			if resp, ok := responseTo(s.msgs, m.Msg.ID); ok {
				c.Answered = true
				c.Result = resp.Result
				if len(resp.Error) > 0 {
					var e struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
					}
					if json.Unmarshal(resp.Error, &e) != nil || (e.Code == 0 && e.Message == "") {
						e.Message = string(resp.Error)
					}
					c.ErrCode, c.ErrMsg = e.Code, e.Message
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// serverNotifications lists the methods of the server's notifications in order.
func (s cliSession) serverNotifications() []string {
	var out []string
	for _, m := range s.msgs {
		if !m.FromClient && m.Bad == nil && m.Msg.Method != "" {
			out = append(out, m.Msg.Method)
		}
	}
	return out
}

// methodCounts is the multiset of methods.
func methodCounts(calls []rpcCall) map[string]int {
	m := map[string]int{}
	for _, c := range calls {
		m[c.Method]++
	}
	return m
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// The normalization that makes two recordings comparable (TestCodexCLI_SameMethodsAsReference):
//
//   - Request ids, process ids, thread ids, watch ids, timeouts and timestamps are dropped:
//     a call is named by its method and what it is about (callKey): the path(s) of an fs/*
//     call, the config selectors of environmentConfig/read, the argv of process/start, the
//     URL and JSON-RPC method of the body of an http/request; per-run directories are
//     replaced by placeholders (<work>, <home>, …).
//   - process/read is dropped: it is a poll, as many as the timing needs (0.171.0 sends
//     none when the output arrives by process/output notifications).
//   - Order is not compared: the CLI runs project discovery, MCP start-up and the turn
//     concurrently, so the interleaving differs from run to run even against one server.
//     What is compared is the set of distinct calls (a call sent to one server and not to
//     the other is a difference), and the number of calls of each method except
//     fs/getMetadata and fs/watchMissing, whose repetitions depend on when the metadata
//     cache is invalidated (fs/missingChanged) relative to the turn.
//   - Each call's outcome is ok or error: a call that the reference answered with a result
//     and ours with an error (or the reverse) is a difference; error codes and messages
//     are test/conformance's business.
//   - The server's notifications are compared as a set of methods (process/output comes in
//     as many chunks as the timing makes).
//   - The command's output the CLI sends to the model is compared without its chunk id and
//     wall time (the command sends stderr to stdout, so the order is fixed).

// placeholders maps per-run directories to stable names, longest first.
type placeholders [][2]string

func newPlaceholders(pairs ...string) placeholders {
	var p placeholders
	for i := 0; i+1 < len(pairs); i += 2 {
		p = append(p, [2]string{pairs[i], pairs[i+1]})
	}
	sort.SliceStable(p, func(i, j int) bool { return len(p[i][0]) > len(p[j][0]) })
	return p
}

func (p placeholders) apply(s string) string {
	for _, r := range p {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	return s
}

// sessionPlaceholders names the directories of one run: the workspace and the
// exec-server's environment.
func sessionPlaceholders(work string, env executorEnv) placeholders {
	return newPlaceholders(work, "<work>", filepath.Dir(work), "<work-parent>",
		env.codexHome, "<codex-home>", env.home, "<home>", env.tmp, "<tmp>", filepath.Dir(env.home), "<env-base>")
}

// callKey names what a call is about, without what varies from run to run.
func callKey(c rpcCall, names placeholders) string {
	var p struct {
		Path        string          `json:"path"`
		Missing     []string        `json:"missing"`
		Present     *string         `json:"present"`
		Cwd         string          `json:"cwd"`
		ConfigPaths json.RawMessage `json:"configPaths"`
		Argv        []string        `json:"argv"`
		URL         string          `json:"url"`
		Method      string          `json:"method"`
		BodyBase64  string          `json:"bodyBase64"`
		Roots       []struct {
			Path string `json:"path"`
		} `json:"roots"`
	}
	_ = json.Unmarshal(c.Params, &p) // a malformed params is keyed by its method alone
	var parts []string
	add := func(name, v string) {
		if v != "" {
			parts = append(parts, name+"="+v)
		}
	}
	add("path", p.Path)
	if len(p.Missing) > 0 {
		m := append([]string(nil), p.Missing...)
		sort.Strings(m)
		add("missing", strings.Join(m, ","))
	}
	if p.Present != nil {
		add("present", *p.Present)
	}
	if c.Method == "environmentConfig/read" {
		add("cwd", p.Cwd)
		add("configPaths", string(p.ConfigPaths))
	}
	if len(p.Argv) > 0 {
		add("argv", strings.Join(p.Argv, " "))
	}
	if p.URL != "" {
		add("http", p.Method+" "+p.URL)
		var body struct {
			Method string `json:"method"`
		}
		if raw, err := base64.StdEncoding.DecodeString(p.BodyBase64); err == nil && json.Unmarshal(raw, &body) == nil {
			add("rpc", body.Method)
		}
	}
	for _, r := range p.Roots {
		add("root", r.Path)
	}
	return names.apply(strings.TrimSpace(c.Method + " " + strings.Join(parts, " ")))
}

// unCountedMethods are compared by presence only, not by count (see the normalization).
var unCountedMethods = map[string]bool{"fs/getMetadata": true, "fs/watchMissing": true, "process/read": true}

// compareSessions returns the differences between ours and the reference's recording,
// each as one line; none means the CLI drove both alike.
func compareSessions(ref, ours cliSession, refNames, ourNames placeholders) []string {
	type seen struct {
		ok, failed int
	}
	index := func(s cliSession, names placeholders) (map[string]*seen, map[string]int) {
		keys, counts := map[string]*seen{}, map[string]int{}
		for _, c := range s.calls() {
			if c.Method == "process/read" {
				continue
			}
			counts[c.Method]++
			k := callKey(c, names)
			if keys[k] == nil {
				keys[k] = &seen{}
			}
			if c.failed() || (c.ID != "" && !c.Answered) {
				keys[k].failed++
			} else {
				keys[k].ok++
			}
		}
		return keys, counts
	}
	refKeys, refCounts := index(ref, refNames)
	ourKeys, ourCounts := index(ours, ourNames)
	var diffs []string
	for _, k := range sortedKeys(keysOf(refKeys)) {
		o, r := ourKeys[k], refKeys[k]
		switch {
		case o == nil:
			diffs = append(diffs, "sent to the reference, not to ours: "+k)
		case r.failed == 0 && o.failed > 0:
			diffs = append(diffs, fmt.Sprintf("ours answered with an error, the reference did not (%d ok): %s", r.ok, k))
		case r.ok > 0 && o.ok == 0:
			diffs = append(diffs, "the reference answered ok, ours never did: "+k)
		}
	}
	for _, k := range sortedKeys(keysOf(ourKeys)) {
		if refKeys[k] == nil {
			diffs = append(diffs, "sent to ours, not to the reference: "+k)
		}
	}
	for _, m := range sortedKeys(mergeKeys(refCounts, ourCounts)) {
		if !unCountedMethods[m] && refCounts[m] != ourCounts[m] {
			diffs = append(diffs, fmt.Sprintf("%s sent %d times to the reference, %d times to ours", m, refCounts[m], ourCounts[m]))
		}
	}
	refNotes, ourNotes := map[string]int{}, map[string]int{}
	for _, n := range ref.serverNotifications() {
		refNotes[n]++
	}
	for _, n := range ours.serverNotifications() {
		ourNotes[n]++
	}
	for _, n := range sortedKeys(mergeKeys(refNotes, ourNotes)) {
		if (refNotes[n] > 0) != (ourNotes[n] > 0) {
			diffs = append(diffs, fmt.Sprintf("notification %s: %d from the reference, %d from ours", n, refNotes[n], ourNotes[n]))
		}
	}
	return diffs
}

func keysOf[V any](m map[string]V) map[string]int {
	out := make(map[string]int, len(m))
	for k := range m {
		out[k] = 1
	}
	return out
}

func mergeKeys(a, b map[string]int) map[string]int {
	out := map[string]int{}
	for k := range a {
		out[k] = 1
	}
	for k := range b {
		out[k] = 1
	}
	return out
}

// checkSession fails t unless the CLI finished its scripted turn against s.server.
func checkSession(t *testing.T, s cliSession, finalText string) {
	t.Helper()
	if s.runErr != nil {
		t.Errorf("codex exec against %s: %v; stderr: %s", s.server, s.runErr, tail(s.stderr))
	}
	if s.problems != "" {
		t.Errorf("scripted model (against %s): %s", s.server, s.problems)
	}
	if !strings.Contains(s.stdout, finalText) {
		t.Errorf("codex exec against %s: stdout %q lacks the final message %q; stderr: %s", s.server, s.stdout, finalText, tail(s.stderr))
	}
	for _, m := range s.msgs {
		if m.Bad != nil {
			t.Errorf("a frame exchanged with %s is not JSON: %v", s.server, m.Bad)
		}
	}
}

// paritySession is one side of a comparison: the recording and its placeholders.
type paritySession struct {
	cliSession
	names placeholders
}

// runParity runs the scripted session of rel's CLI against the reference and then ours,
// each in a fresh environment prepared by setup (the executor's) and a fresh git
// workspace prepared by setupWork, and compares the recordings. It returns both.
func runParity(t *testing.T, rel refbin.Release, cmd string, setup func(env executorEnv), setupWork func(work string)) (ref, ours paritySession) {
	t.Helper()
	var out [2]paritySession
	for i, which := range []string{"reference", "ours"} {
		env := newExecutorEnv(t)
		setup(env)
		var srv *execServer
		if which == "ours" {
			var extra []string // advertise the reference's helper directory as it does
			if d := referenceHelperDir(rel); d != "" {
				extra = []string{"--prepend-path-dir", d}
			}
			srv = startOursIn(t, env, extra...)
		} else {
			srv = startReferenceIn(t, rel, env)
		}
		work := newGitWorkspace(t)
		setupWork(work)
		finalText := fmt.Sprintf("e2e-final-%d", randomFactor(t))
		s := runRecordedSession(t, rel, srv, work, newScriptedModel(t, cmd, finalText))
		checkSession(t, s, finalText)
		out[i] = paritySession{cliSession: s, names: sessionPlaceholders(work, env)}
	}
	ref, ours = out[0], out[1]
	diffs := compareSessions(ref.cliSession, ours.cliSession, ref.names, ours.names)
	if r, o := ref.prependPathDirs(), ours.prependPathDirs(); r != o {
		diffs = append(diffs, fmt.Sprintf("initialize prependPathDirs: reference %s, ours %s", r, o))
	}
	if r, o := ref.names.apply(ref.toolOutput()), ours.names.apply(ours.toolOutput()); r != o {
		diffs = append(diffs, fmt.Sprintf("the command's output sent to the model differs: reference %q, ours %q", r, o))
	}
	if len(diffs) > 0 || t.Failed() || os.Getenv("CODEX_E2E_VERBOSE") != "" {
		log := t.Logf
		if len(diffs) > 0 {
			log = t.Errorf
		}
		log("codex %s: %d difference(s) between the reference and ours:\n  %s", rel.Version, len(diffs), strings.Join(diffs, "\n  "))
		for _, p := range []paritySession{ref, ours} {
			t.Logf("calls the CLI sent to %s, in order:\n%s  server notifications: %v\n  tool output: %q",
				p.server, renderKeyedCalls(p.calls(), p.names), p.serverNotifications(), p.toolOutput())
		}
	}
	return ref, ours
}

// toolOutput is the scripted command's output as the CLI sent it to the model, without the
// lines that vary from run to run (chunk id, wall time).
func (s cliSession) toolOutput() string {
	for _, r := range s.requests {
		if o, ok := toolOutput(r); ok {
			var keep []string
			for _, line := range strings.Split(o, "\n") {
				if !strings.HasPrefix(line, "Chunk ID: ") && !strings.HasPrefix(line, "Wall time: ") {
					keep = append(keep, line)
				}
			}
			return strings.Join(keep, "\n")
		}
	}
	return ""
}

// renderKeyedCalls is a method sequence for the log, normalized.
func renderKeyedCalls(calls []rpcCall, names placeholders) string {
	var b strings.Builder
	for i, c := range calls {
		outcome := "ok"
		switch {
		case c.ID == "":
			outcome = "notification"
		case !c.Answered:
			outcome = "no response"
		case c.failed():
			outcome = fmt.Sprintf("error %d %s", c.ErrCode, names.apply(c.ErrMsg))
		}
		fmt.Fprintf(&b, "  %3d %s → %s\n", i, callKey(c, names), outcome)
	}
	return b.String()
}

// TestCodexCLI_SameMethodsAsReference (issue 28): per release, that release's codex CLI runs
// the same scripted session (`codex exec -s workspace-write` in a git repository whose
// .agents/skills does not exist; the model runs one shell command) against the release's
// `codex exec-server` and against `executor serve`, each behind a recording wsTap, and the
// two recordings must agree after the normalization above: every call sent to the
// reference is sent to ours, none is answered with an error by ours that the reference
// answered with a result, and nothing extra. The command writes proof.txt, runs
// `git status` (which touches .git, the watch's present path: fs/missingChanged) and tries
// to create .agents/skills, which workspace-write keeps read-only through both servers;
// its output, as the CLI sends it to the model, must be the same through both. For 0.171.0 the recording of the reference
// must include environmentConfig/read and fs/watchMissing (the capabilities the issue is
// about), so the comparison proves ours receives them too. On a difference both normalized
// sequences are logged; CODEX_E2E_VERBOSE=1 logs them always.
func TestCodexCLI_SameMethodsAsReference(t *testing.T) {
	startCodexCLITest(t)
	refbin.ForEachRelease(t, func(t *testing.T, rel refbin.Release) {
		ref, ours := runParity(t, rel, "exec 2>&1; echo e2e-parity > proof.txt && git status --short; mkdir -p .agents/skills && echo made-skills-dir",
			func(executorEnv) {}, func(string) {})
		if rel.Version != "0.171.0" {
			return
		}
		for _, m := range []string{"environmentConfig/read", "fs/watchMissing"} {
			for _, s := range []paritySession{ref, ours} {
				if methodCounts(s.calls())[m] == 0 {
					t.Errorf("codex %s sent no %s to %s", rel.Version, m, s.server)
				}
			}
		}
	})
}
