package conformance_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/internal/refbin"
)

// server is one running executor (ours or the reference).
type server struct {
	name string // "reference" or "ours", for failure messages
	url  string
	tmp  string // the scenario's ${TMP}
}

// recvTimeout bounds every receive; the reference tests wait at most 5 s per event.
const recvTimeout = 5 * time.Second

// startServer starts bin in a fresh ${TMP} with CODEX_HOME=codexHome, or
// ${TMP}/codex-home when codexHome is "". With sc.HomeInTmp, HOME=${TMP}/home (created
// empty); with sc.FilesBeforeStart, sc's files and setup are laid before the start.
func startServer(t *testing.T, bin string, args []string, codexHome string, sc *Scenario) *server {
	t.Helper()
	tmp, err := os.MkdirTemp("/var/tmp/executor-tests", "scenario-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if codexHome == "" { // Scenario.CodexHomeInTmp
		codexHome = filepath.Join(tmp, "codex-home")
		if err := os.Mkdir(codexHome, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "CODEX_HOME="+codexHome, "TMPDIR="+tmp, "RUST_LOG=off",
		"CONFORMANCE_HDR=from-env", "CONFORMANCE_EMPTY=")
	if sc != nil && sc.HomeInTmp {
		home := filepath.Join(tmp, "home")
		if err := os.Mkdir(home, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd.Env = append(cmd.Env, "HOME="+home)
	}
	if sc != nil && sc.FilesBeforeStart {
		layFiles(t, sc, tmp)
	}
	cmd.Dir = tmp
	name := "ours"
	if len(args) > 0 && args[0] == "exec-server" {
		name = "reference"
	}
	u := refbin.Launch(t, cmd, &refbin.LaunchOptions{Line: wsURL, LineTimeout: 10 * time.Second, Kill: true, Name: name}).URL()
	return &server{name: name, url: u, tmp: tmp}
}

// wsURL is the line both servers print when listening.
var wsURL = regexp.MustCompile(`^ws://\S+$`)

// transcript is what one server sent during a scenario, before normalization: render
// (releases_test.go) turns it into comparable lines for one release.
type transcript struct {
	srv    *server
	groups []group
}

// group is the outcome of one step: received messages, or a marker line.
type group struct {
	marker string     // "<closed>", "<reconnected>", "<use N>"; no messages
	msgs   []received // in arrival order
	set    bool       // compared as a multiset: lines are sorted after normalization
}

// received is one message with the method of the request it answers ("" for
// notifications, or when the id was never sent on this connection).
type received struct {
	msg    map[string]any
	method string
}

// run plays the scenario against srv and returns its transcript.
// layFiles writes sc's files under tmp, then runs its setup there.
func layFiles(t *testing.T, sc *Scenario, tmp string) {
	t.Helper()
	for rel, content := range sc.Files {
		p := filepath.Join(tmp, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if sc.Setup != "" {
		cmd := exec.Command("bash", "-c", sc.Setup)
		cmd.Dir = tmp
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("setup: %v: %s", err, out)
		}
	}
}

func run(t *testing.T, sc *Scenario, srv *server) *transcript {
	t.Helper()
	if !sc.FilesBeforeStart {
		layFiles(t, sc, srv.tmp)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dial := func() *websocket.Conn {
		c, _, err := websocket.Dial(ctx, srv.url, nil)
		if err != nil {
			t.Fatalf("dialing %s: %v", srv.url, err)
		}
		c.SetReadLimit(256 << 20)
		return c
	}
	conns := map[int]*websocket.Conn{0: dial()}
	cur := 0
	c := conns[0]
	defer func() {
		for _, c := range conns {
			c.CloseNow()
		}
	}()
	// methods maps, per connection, the id of each request sent to its method, so that
	// release rules can tell which request an error answers.
	methods := map[int]map[string]string{0: {}}
	tr := &transcript{srv: srv}
	var lines []string // what has been received so far, for failure messages
	so := func() string { return strings.Join(lines, "\n") }
	add := func(g group) {
		tr.groups = append(tr.groups, g)
		if g.marker != "" {
			lines = append(lines, g.marker)
		}
		for _, r := range g.msgs {
			b, _ := json.Marshal(r.msg)
			lines = append(lines, string(b))
		}
	}
	// lastReq is the id key of the request the latest send step carried ("" when that
	// send was not a request): a recvUntil right after it also waits for its response.
	var lastReq string
	sent := func(b []byte) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method *string         `json:"method"`
		}
		lastReq = ""
		if json.Unmarshal(b, &m) == nil && len(m.ID) > 0 && m.Method != nil {
			lastReq = idKey(m.ID)
			methods[cur][lastReq] = *m.Method
		}
	}
	answered := func(m map[string]any) received {
		r := received{msg: m}
		if id, ok := m["id"]; ok && m["method"] == nil {
			b, _ := json.Marshal(id)
			r.method = methods[cur][idKey(b)]
		}
		return r
	}
	vars := map[string]string{"${TMP}": srv.tmp, "${TMPURI}": "file://" + (&url.URL{Path: srv.tmp}).EscapedPath(), "${HTTP}": httpURL, "${HTTPPORT}": httpPort()}
	for k, v := range blockVars() {
		vars[k] = v
	}
	recv := func() (map[string]any, error) {
		rctx, rcancel := context.WithTimeout(ctx, recvTimeout)
		defer rcancel()
		_, b, err := c.Read(rctx)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("server sent invalid JSON %q: %w", b, err)
		}
		if r, ok := m["result"].(map[string]any); ok {
			if id, ok := r["sessionId"].(string); ok {
				vars["${SESSION}"] = id
			}
		}
		return m, nil
	}
	expand := func(raw json.RawMessage) []byte {
		s := string(raw)
		for k, v := range vars {
			s = strings.ReplaceAll(s, k, v)
		}
		return []byte(s)
	}
	for i, st := range sc.Steps {
		switch {
		case st.Send != nil:
			b := expand(st.Send)
			sent(b)
			if err := c.Write(ctx, websocket.MessageText, b); err != nil {
				t.Fatalf("step %d: send: %v", i, err)
			}
		case st.SendBinary != nil:
			b := expand(st.SendBinary)
			sent(b)
			if err := c.Write(ctx, websocket.MessageBinary, b); err != nil {
				t.Fatalf("step %d: send: %v", i, err)
			}
		case st.SendText != nil:
			b := expand(json.RawMessage(*st.SendText))
			sent(b)
			if err := c.Write(ctx, websocket.MessageText, b); err != nil {
				t.Fatalf("step %d: send: %v", i, err)
			}
		case st.Recv > 0 || st.RecvSet > 0:
			n := max(st.Recv, st.RecvSet)
			g := group{set: st.RecvSet > 0}
			for j := 0; j < n; j++ {
				m, err := recv()
				if err != nil {
					add(g)
					t.Fatalf("%s: step %d (%s): message %d of %d: %v\ntranscript so far:\n%s", srv.name, i, st, j+1, n, err, so())
				}
				g.msgs = append(g.msgs, answered(foldReadChunks(sc, m)))
			}
			add(g)
		case st.RecvUntil != "":
			// Collected as a set: responses and process notifications race by nature
			// (both servers); seq values inside the messages still pin event order.
			// The response to the request sent just before this step is part of the set
			// too: a short-lived process's closed may precede its start response (the
			// pumps run before the response is queued, in both servers), and a later
			// recv step must not take that response for its own.
			g := group{set: true}
			var deltas, events []map[string]any
			seen := map[string]bool{}
			wantResp := i > 0 && isSend(sc.Steps[i-1]) && lastReq != ""
			gotResp := false
			for {
				m, err := recv()
				if err != nil {
					add(g)
					t.Fatalf("%s: step %d (%s): %v\ntranscript so far:\n%s", srv.name, i, st, err, so())
				}
				meth, _ := m["method"].(string)
				switch {
				case meth == "http/request/bodyDelta":
					deltas = append(deltas, m)
				case sc.MergeOutput && strings.HasPrefix(meth, "process/"):
					events = append(events, m)
				default:
					g.msgs = append(g.msgs, answered(foldReadChunks(sc, m)))
				}
				if id, ok := m["id"]; ok && m["method"] == nil && wantResp {
					b, _ := json.Marshal(id)
					gotResp = gotResp || idKey(b) == lastReq
				}
				if untilMatches(m, st.RecvUntil, seen) && (!wantResp || gotResp) {
					break
				}
			}
			if len(deltas) > 0 {
				g.msgs = append(g.msgs, received{msg: mergeDeltas(t, deltas)})
			}
			for _, m := range mergeProcessEvents(t, events) {
				g.msgs = append(g.msgs, received{msg: m})
			}
			add(g)
		case st.ExpectClosed:
			m, err := recv()
			var ce websocket.CloseError
			switch {
			case err == nil:
				t.Fatalf("step %d: got message %v, want the connection closed", i, m)
			case errors.As(err, &ce), strings.Contains(err.Error(), "EOF"), strings.Contains(err.Error(), "reset"):
				add(group{marker: "<closed>"})
			default:
				t.Fatalf("step %d: got %v, want the connection closed", i, err)
			}
		case st.Sleep > 0:
			time.Sleep(time.Duration(st.Sleep) * time.Millisecond)
		case st.Reconnect:
			c.CloseNow()
			c = dial()
			conns[cur] = c
			methods[cur] = map[string]string{}
			add(group{marker: "<reconnected>"})
		case st.Use != nil:
			cur = *st.Use
			if conns[cur] == nil {
				conns[cur] = dial()
				methods[cur] = map[string]string{}
			}
			c = conns[cur]
			add(group{marker: fmt.Sprintf("<use %d>", cur)})
		default:
			t.Fatalf("step %d: empty step", i)
		}
	}
	return tr
}

// isSend reports whether st sends a message.
func isSend(st Step) bool {
	return st.Send != nil || st.SendBinary != nil || st.SendText != nil
}

// idKey is the canonical text of a JSON-RPC id, so that a request's id and the id echoed
// in its response match whatever their spacing.
func idKey(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// httpPort is the port of the loopback HTTP fixture, ${HTTPPORT} in scenarios (for
// managedNetwork.loopbackPorts, which needs a bare number).
func httpPort() string {
	u, err := url.Parse(httpURL)
	if err != nil {
		return ""
	}
	return u.Port()
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	peerRE = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)
	dateRE = regexp.MustCompile(`^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9:]{8} GMT$`)
)

// deliberate lists the environment details we intentionally do not report (README,
// "Deliberate deviations"); they are removed before comparison.
var deliberate = map[string]bool{"providerId": true, "prependPathDirs": true, "capabilities": true, "sandboxSupport": true, "sessionTtlMs": true}

func normalize(m map[string]any, srv *server, mask []string) string {
	for _, path := range mask {
		maskPath(m, strings.Split(path, "."))
	}
	v := scrub(m, srv)
	sortDirectoryEntries(v)
	sortResponseHeaders(v)
	b, _ := json.Marshal(v) // map keys are sorted: field order does not matter
	return string(b)
}

func maskPath(v any, path []string) {
	m, ok := v.(map[string]any)
	if !ok || len(path) == 0 {
		return
	}
	if len(path) == 1 {
		if _, ok := m[path[0]]; ok {
			m[path[0]] = "<masked>"
		}
		return
	}
	maskPath(m[path[0]], path[1:])
}

func scrub(v any, srv *server) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if deliberate[k] {
				continue
			}
			out[k] = scrub(e, srv)
		}
		return out
	case []any:
		for i := range x {
			x[i] = scrub(x[i], srv)
		}
		return x
	case string:
		s := strings.ReplaceAll(x, srv.tmp, "<TMP>")
		s = strings.ReplaceAll(s, (&url.URL{Path: srv.tmp}).EscapedPath(), "<TMP>")
		s = uuidRE.ReplaceAllString(s, "<UUID>")
		s = peerRE.ReplaceAllString(s, "127.0.0.1:<PORT>")
		s = dateRE.ReplaceAllString(s, "<DATE>")
		return s
	}
	return v
}

// sortDirectoryEntries orders fs/readDirectory entries by name: the reference emits raw
// directory order, we emit sorted order (a documented deviation), so order is not compared.
func sortDirectoryEntries(v any) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	r, ok := m["result"].(map[string]any)
	if !ok {
		return
	}
	entries, ok := r["entries"].([]any)
	if !ok || len(entries) == 0 {
		return
	}
	if e, ok := entries[0].(map[string]any); !ok || e["fileName"] == nil {
		return
	}
	sort.SliceStable(entries, func(i, j int) bool {
		a, _ := entries[i].(map[string]any)["fileName"].(string)
		b, _ := entries[j].(map[string]any)["fileName"].(string)
		return a < b
	})
}

// untilMatches reports whether m ends a recvUntil step: "method", or
// "http/request/bodyDelta:done" for the terminal body frame. "process/closed" waits for
// both the closed and the exited event, which the reference may send in either order.
func untilMatches(m map[string]any, until string, seen map[string]bool) bool {
	if meth, _ := m["method"].(string); meth != "" {
		seen[meth] = true
	}
	if until == "process/closed" {
		return seen["process/closed"] && seen["process/exited"]
	}
	method, done := strings.CutSuffix(until, ":done")
	if m["method"] != method {
		return false
	}
	if !done {
		return true
	}
	p, _ := m["params"].(map[string]any)
	return p["done"] == true
}

// mergeDeltas checks that body deltas have contiguous seqs from 1 and that only the last
// is done, then folds them into one message so that chunk boundaries are not compared.
func mergeDeltas(t *testing.T, deltas []map[string]any) map[string]any {
	t.Helper()
	var body []byte
	var last map[string]any
	for i, d := range deltas {
		p, _ := d["params"].(map[string]any)
		if seq, _ := p["seq"].(float64); int(seq) != i+1 {
			t.Fatalf("bodyDelta %d has seq %v, want %d", i, p["seq"], i+1)
		}
		if done, _ := p["done"].(bool); done != (i == len(deltas)-1) {
			t.Fatalf("bodyDelta %d has done=%v", i, done)
		}
		b, err := base64.StdEncoding.DecodeString(p["deltaBase64"].(string))
		if err != nil {
			t.Fatalf("bodyDelta %d: %v", i, err)
		}
		body = append(body, b...)
		last = p
	}
	return map[string]any{"method": "http/request/bodyDelta(merged)", "params": map[string]any{
		"requestId": last["requestId"], "body": string(body), "error": last["error"]}}
}

// sortResponseHeaders orders http/request response headers by name (stable): Go's
// net/http does not keep the wire order of response headers, the reference does (a
// documented deviation); values of one name keep their order.
func sortResponseHeaders(v any) {
	m, _ := v.(map[string]any)
	r, _ := m["result"].(map[string]any)
	hs, ok := r["headers"].([]any)
	if !ok {
		return
	}
	sort.SliceStable(hs, func(i, j int) bool {
		a, _ := hs[i].(map[string]any)["name"].(string)
		b, _ := hs[j].(map[string]any)["name"].(string)
		return a < b
	})
}

// mergeProcessEvents checks that the seqs of each process's events are distinct and
// contiguous, then returns one merged output message per (process, stream) and the other
// events with their seq masked.
func mergeProcessEvents(t *testing.T, events []map[string]any) []map[string]any {
	t.Helper()
	type key struct{ pid, stream string }
	data := map[key][]byte{}
	seqs := map[string][]int{}
	var out []map[string]any
	sort.SliceStable(events, func(i, j int) bool {
		a, _ := events[i]["params"].(map[string]any)["seq"].(float64)
		b, _ := events[j]["params"].(map[string]any)["seq"].(float64)
		return a < b
	})
	for _, m := range events {
		p, _ := m["params"].(map[string]any)
		pid, _ := p["processId"].(string)
		seq, _ := p["seq"].(float64)
		seqs[pid] = append(seqs[pid], int(seq))
		if m["method"] == "process/output" {
			b, err := base64.StdEncoding.DecodeString(p["chunk"].(string))
			if err != nil {
				t.Fatalf("bad chunk: %v", err)
			}
			k := key{pid, p["stream"].(string)}
			data[k] = append(data[k], b...)
			continue
		}
		p["seq"] = "<seq>"
		out = append(out, m)
	}
	for pid, ss := range seqs {
		for i := 1; i < len(ss); i++ {
			if ss[i] != ss[i-1]+1 {
				t.Fatalf("process %s: seqs %v are not contiguous", pid, ss)
			}
		}
	}
	for k, b := range data {
		out = append(out, map[string]any{"method": "process/output(merged)", "params": map[string]any{
			"processId": k.pid, "stream": k.stream, "data": string(b)}})
	}
	return out
}

// foldReadChunks returns m; with sc.MergeOutput, a process/read result has its chunks
// folded per stream and nextSeq masked, like merged notifications.
func foldReadChunks(sc *Scenario, m map[string]any) map[string]any {
	if sc.MergeOutput {
		if r, ok := m["result"].(map[string]any); ok {
			if chunks, ok := r["chunks"].([]any); ok {
				data := map[string]string{}
				for _, c := range chunks {
					cm, _ := c.(map[string]any)
					b, _ := base64.StdEncoding.DecodeString(cm["chunk"].(string))
					data[cm["stream"].(string)] += string(b)
				}
				folded := map[string]any{} // map[string]any so that mask paths reach into it
				for k, v := range data {
					folded[k] = v
				}
				r["chunks"] = folded
				r["nextSeq"] = "<seq>"
			}
		}
	}
	return m
}
