package jsonrpc_test

// Differential tests: every input goes to the reference exec-server and to Parse /
// UnmarshalParams, and the decoder detail must match byte for byte.

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/jsonwire"
)

// Mirrors of the reference's params types (the protocol package owns the real ones).

type refInitializeParams struct {
	ClientName      string  `json:"clientName"`
	ResumeSessionID *string `json:"resumeSessionId,omitempty"`
}

func (refInitializeParams) RustName() string { return "InitializeParams" }

type refReadParams struct {
	ProcessID string  `json:"processId"`
	AfterSeq  *uint64 `json:"afterSeq"`
	MaxBytes  *uint   `json:"maxBytes"`
	WaitMs    *uint64 `json:"waitMs"`
}

func (refReadParams) RustName() string { return "ReadParams" }

func (refWriteParams) RustName() string { return "WriteParams" }

type refWriteParams struct {
	ProcessID string         `json:"processId"`
	Chunk     jsonwire.Bytes `json:"chunk"`
	WriteID   string         `json:"writeId"`
}

type refSignal string

func (refSignal) Variants() []string { return []string{"interrupt"} }

func (refSignalParams) RustName() string { return "SignalParams" }

type refSignalParams struct {
	ProcessID string    `json:"processId"`
	Signal    refSignal `json:"signal"`
}

type refRedirectPolicy string

func (refRedirectPolicy) Variants() []string { return []string{"follow", "stop"} }

func (refHeader) RustName() string { return "HttpHeader" }

type refHeader struct {
	Name        string  `json:"name"`
	Value       string  `json:"value"`
	ValueEnvVar *string `json:"valueEnvVar,omitempty"`
}

func (refHTTPParams) RustName() string { return "HttpRequestParams" }

type refHTTPParams struct {
	Method         string            `json:"method"`
	URL            string            `json:"url"`
	Headers        []refHeader       `json:"headers,omitempty"`
	BodyBase64     *jsonwire.Bytes   `json:"bodyBase64,omitempty"`
	TimeoutMs      *uint64           `json:"timeoutMs,omitempty"`
	RedirectPolicy refRedirectPolicy `json:"redirectPolicy,omitempty"`
	RequestID      string            `json:"requestId"`
	StreamResponse bool              `json:"streamResponse,omitempty"`
}

func (refStartParams) RustName() string { return "WireExecParams" }

type refStartParams struct {
	ProcessID string            `json:"processId"`
	Argv      []string          `json:"argv"`
	Cwd       string            `json:"cwd"`
	Env       map[string]string `json:"env"`
	Tty       bool              `json:"tty"`
	PipeStdin bool              `json:"pipeStdin,omitempty"`
	Arg0      *string           `json:"arg0,omitempty"`
}

type refWalkOptions struct {
	MaxDepth                uint `json:"maxDepth"`
	MaxDirectories          uint `json:"maxDirectories"`
	MaxEntries              uint `json:"maxEntries"`
	FollowDirectorySymlinks bool `json:"followDirectorySymlinks"`
	PruneHiddenDirectories  bool `json:"pruneHiddenDirectories,omitempty"`
}

func (refWalkOptions) RustName() string { return "WalkOptions" }

func (refWalkParams) RustName() string { return "WireFsWalkParams" }

type refWalkParams struct {
	Path    string         `json:"path"`
	Options refWalkOptions `json:"options"`
}

func (refReadBlockParams) RustName() string { return "FsReadBlockParams" }

type refReadBlockParams struct {
	HandleID string `json:"handleId"`
	Offset   uint64 `json:"offset"`
	Len      uint   `json:"len"`
}

// paramsTargets maps a registered method to a fresh decode target.
var paramsTargets = map[string]func() any{
	"initialize":         func() any { return new(refInitializeParams) },
	"environment/info":   func() any { return new(jsonwire.Unit) },
	"environment/status": func() any { return new(jsonwire.Unit) },
	"process/read":       func() any { return new(refReadParams) },
	"process/write":      func() any { return new(refWriteParams) },
	"process/signal":     func() any { return new(refSignalParams) },
	"process/start":      func() any { return new(refStartParams) },
	"http/request":       func() any { return new(refHTTPParams) },
	"fs/walk":            func() any { return new(refWalkParams) },
	"fs/readBlock":       func() any { return new(refReadBlockParams) },
}

// compareWithReference sends msg and checks that Parse (and, for a request to a method
// in paramsTargets, UnmarshalParams) reproduce the reference's outcome.
func compareWithReference(t *testing.T, c *refClient, msg []byte, binary bool) {
	t.Helper()
	rep := c.send(msg, binary)
	m, err := jsonrpc.Parse(msg)
	if detail, malformed := rep.parseDetail(); malformed {
		if err == nil {
			t.Errorf("Parse(%.200q): got success (%v), want error %q", msg, m.Kind, detail)
		} else if err.Error() != detail {
			t.Errorf("Parse(%.100q…%q):\n got  %q\n want %q", msg, msg[max(0, len(msg)-40):], err.Error(), detail)
		}
		return
	}
	if err != nil {
		t.Errorf("Parse(%.200q): got error %q, want success (reference replied %+v)", msg, err, rep)
		return
	}
	if m.Kind != jsonrpc.KindRequest {
		if !rep.closed {
			t.Errorf("Parse(%.200q): got %v, but the reference replied %+v", msg, m.Kind, rep)
		}
		return
	}
	if rep.closed {
		t.Errorf("Parse(%.200q): got a request, but the reference closed the connection", msg)
		return
	}
	if got, want := m.ID.String(), string(rep.id); got != want {
		t.Errorf("Parse(%.200q): got id %s, want %s", msg, got, want)
	}
	newTarget, ok := paramsTargets[m.Method]
	if !ok {
		return
	}
	perr := jsonwire.UnmarshalParams(m.Params, newTarget())
	if rep.code == jsonwire.CodeInvalidParams {
		var e *jsonwire.Error
		switch {
		case perr == nil:
			t.Errorf("UnmarshalParams(%s, %.200s): got success, want %q", m.Method, m.Params, rep.message)
		case !asError(perr, &e) || e.Code != jsonwire.CodeInvalidParams || e.Message != rep.message:
			t.Errorf("UnmarshalParams(%s, %.200s):\n got  %v\n want %q", m.Method, m.Params, perr, rep.message)
		}
	} else if perr != nil {
		t.Errorf("UnmarshalParams(%s, %.200s): got %v, want success (reference replied %d %q)", m.Method, m.Params, perr, rep.code, rep.message)
	}
}

func asError(err error, target **jsonwire.Error) bool {
	e, ok := err.(*jsonwire.Error)
	*target = e
	return ok
}

func req(method, params string) string {
	return fmt.Sprintf(`{"id":1,"method":%q,"params":%s}`, method, params)
}

// referenceCases are the hand-picked edge cases; each was also checked against the
// reference when the golden tables in the unit tests were written.
func referenceCases() []string {
	zeros := func(n int) string { return "[" + strings.TrimSuffix(strings.Repeat("0,", n), ",") + "]" }
	cases := []string{
		// Bad JSON.
		"not-json", "", " ", "\t\r\n", "{", "[", `{"a"`, `{"a":`, `{"a":1`, `{"a":1,`, `{"a":1,}`, `{a:1}`, `{"a" 1}`,
		`{,}`, `{"a":1,,}`, `[1,]`, `[,1]`, `{"a":[1 2]}`, `{"a":{"b":1 "c":2}}`, `{"a":tx}`, `{"a":fals}`, `{"a":t`,
		`{"a":01}`, `{"a":-}`, `{"a":-`, `{"a":1.}`, `{"a":1.`, `{"a":1e}`, `{"a":1e+`, `{"a":+1}`, `{"a":.5}`, `{"a":-a}`,
		"{\"a\":\"\x01\"}", `{"a":"\q"}`, `{"a":"\u12"}`, `{"a":"\uZZZZ"}`, `{"a":"\ud800"}`, `{"a":"\ud800\u0041"}`,
		`{"a":"\udc00"}`, `{"a":"\ud800\"}`, `{"a":"\ud800\ud`, `{"a":"abc`, "\ufeff{}", "\f{}", `{"a":1} x`,
		`{"id":1,"method":"zz"} x`, `{"id":1,"method":"zz"}  ` + "\n ", `{"id":1,"method":"zz", "b":[0,0]} ` + "\n \n  x",
		// Budget: exactly at the limit, one over, over with whitespace and newlines.
		req("zz", zeros(jsonwire.MaxValues-4)), req("zz", zeros(jsonwire.MaxValues-3)),
		`{"id":1,"method":"zz","params":` + strings.TrimSuffix(zeros(jsonwire.MaxValues-4), "]") + ",\n  \"x\"]}",
		`{"id":1,"method":"zz","params":` + strings.TrimSuffix(zeros(jsonwire.MaxValues-4), "]") + ",}",
		zeros(jsonwire.MaxValues - 1), zeros(jsonwire.MaxValues),
		// The object member whose value is one over budget: budget beats EOF and syntax.
		`{"id":1,"method":"zz","params":{"x":` + zeros(jsonwire.MaxValues-5) + `,"k":`,
		`{"id":1,"method":"zz","params":{"x":` + zeros(jsonwire.MaxValues-5) + `,"k":  }}`,
		`{"id":1,"method":"zz","params":{"x":` + zeros(jsonwire.MaxValues-5) + `,"k": x}}`,
		`{"id":1,"method":"zz","params":{"x":` + zeros(jsonwire.MaxValues-5) + `,"k":` + strings.Repeat("[", 200),
		`{"id":1,"method":"zz","params":` + strings.TrimSuffix(zeros(jsonwire.MaxValues-4), "]") + ",,  x]}",
		`{"id":1,"method":"zz","params":` + strings.TrimSuffix(zeros(jsonwire.MaxValues-4), "]") + ",]  ]}",
		// One over budget and too deep at once.
		`{"id":1,"method":"zz","params":[` + strings.TrimSuffix(strings.TrimPrefix(zeros(jsonwire.MaxValues-4-126), "["), "]") + "," + strings.Repeat("[", 130),
		// Nesting.
		req("zz", strings.Repeat("[", 126)+strings.Repeat("]", 126)),
		req("zz", strings.Repeat("[", 127)+strings.Repeat("]", 127)),
		strings.Repeat("[", 200), strings.Repeat(`{"a":`, 128) + "1" + strings.Repeat("}", 128),
		// Duplicate keys, nested and escaped.
		`{"a":1,"a":2}`, `{"b":{"a":1,"a":2}}`, `{"a":1,"a"}`, `{"a":1,"a"   :2}`, `{"a":1,"\u0061":2}`,
		"{\"a\":1,\n\"a\":2}", `{"id":1,"id":1,"method":"x"}`, `{"é":1,"é":2}`, `{"a\nb":1,"a\nb":2}`,
		`{"id":1,"method":"zz","params":{"x":[{"k":1,"k":2}]}}`,
		// Ids.
		`{"id":null,"method":"x"}`, `{"id":1.5,"method":"x"}`, `{"id":1.0,"method":"x"}`, `{"id":1e2,"method":"x"}`,
		`{"id":{},"method":"x"}`, `{"id":[],"method":"x"}`, `{"id":true,"method":"x"}`,
		`{"id":9223372036854775808,"method":"x"}`, `{"id":-9223372036854775808,"method":"zz"}`,
		`{"id":-9223372036854775809,"method":"x"}`, `{"id":18446744073709551616,"method":"zz"}`,
		`{"id":340282366920938463463374607431768211456,"method":"zz"}`, `{"id":-0,"method":"zz"}`,
		`{"id":"7","method":"zz"}`, `{"id":"a\/b\u00e9\n","method":"zz"}`, `{"id":1e400,"method":"zz"}`,
		// Batches and other roots.
		"[]", "[1]", `[{"id":1,"method":"zz"}]`, "true", "null", `"s"`, "[] x",
		// Envelope shapes.
		"{}", `{"id":1}`, `{"method":1}`, `{"id":1,"method":null}`, `{"id":1,"error":{}}`, `{"id":1,"error":{"code":1}}`,
		`{"result":1}`, `{"id":99,"result":null}`, `{"error":{"code":1,"message":"m"}}`, `{"id":99,"error":5}`,
		`{"id":99,"error":[1,"m"]}`, `{"id":99,"error":{"code":1.5,"message":"m"}}`, `{"id":99,"error":{"code":"x","message":"m"}}`,
		`{"id":1,"method":"zz","trace":1}`, `{"id":1,"method":"zz","trace":{"traceparent":5}}`, `{"id":1,"method":"zz","trace":[null,null,null]}`,
		`{"id":1,"method":"zz","trace":{"a":1e400}}`, `{"id":1,"method":"zz","params":1e400,"jsonrpc":"1.0"}`,
		`{"method":"zz","params":5,"id":"\u0041"}`, `{"a":1e400}`,
		// Params: initialize.
		`{"id":1,"method":"initialize"}`, req("initialize", "null"), req("initialize", "{}"), req("initialize", "[]"),
		req("initialize", `"x"`), req("initialize", "5"), req("initialize", "true"), req("initialize", `{"clientName":5}`),
		req("initialize", `{"clientName":null}`), req("initialize", `{"clientName":"a","resumeSessionId":[]}`),
		req("initialize", `["a",null,3]`), req("initialize", `{"clientName":{}}`),
		// Params: unit methods.
		`{"id":1,"method":"environment/info"}`, req("environment/info", "{}"), req("environment/info", "null"),
		req("environment/info", "[]"), req("environment/info", `{"a":1}`), req("environment/info", `"x"`),
		req("environment/status", "5"), req("environment/status", "[1]"), req("environment/info", " {\n } "),
		req("process/read", `{"\u0070rocessId":5}`), req("process/signal", `{"processId":"p","signal":{"\u0069nterrupt":null}}`),
		req("process/read", `["p",null,null,null,null]`), req("process/read", `["p",1,2,3]`), req("process/read", `["p",null,null]`),
		// Params: process/read numbers.
		req("process/read", `{"processId":"p","afterSeq":1.5}`), req("process/read", `{"processId":"p","afterSeq":-1}`),
		req("process/read", `{"processId":"p","afterSeq":1e3}`), req("process/read", `{"processId":"p","afterSeq":18446744073709551616}`),
		req("process/read", `{"processId":"p","afterSeq":18446744073709551615}`), req("process/read", `{"processId":"p","afterSeq":-0}`),
		req("process/read", `{"processId":"p","afterSeq":"1"}`), req("process/read", `{"processId":"p","maxBytes":"x"}`),
		req("process/read", `{"waitMs":"x","afterSeq":true}`), req("process/read", `{"afterSeq":1}`),
		req("process/read", `{"processId":"p","afterSeq":"\n\t\u0000\u0001\u007f\u00e9\u0301\u00a0x"}`),
		// Params: process/write base64.
		req("process/write", `{"processId":"p","chunk":"aGk","writeId":"w"}`), req("process/write", `{"processId":"p","chunk":"aG=k","writeId":"w"}`),
		req("process/write", `{"processId":"p","chunk":"a","writeId":"w"}`), req("process/write", `{"processId":"p","chunk":"aGk=\n","writeId":"w"}`),
		req("process/write", `{"processId":"p","chunk":"aGl=","writeId":"w"}`), req("process/write", `{"processId":"p","chunk":"a-_=","writeId":"w"}`),
		req("process/write", `{"processId":"p","chunk":null,"writeId":"w"}`), req("process/write", `{"processId":"p","chunk":"aGk="}`),
		req("process/write", `{"processId":"p","chunk":"\u0061Gk=","writeId":"w"}`),
		req("process/write", `{"processId":"p","chunk":"aGk=\r\n","writeId":"w"}`), req("process/write", `{"processId":"p","chunk":"AAAAA","writeId":"w"}`),
		req("process/write", `{"processId":"p","chunk":"AAAAAAAA\nAAA","writeId":"w"}`), req("process/write", `{"processId":"p","chunk":"++//","writeId":"w"}`),
		// Params: enums, sequences, maps.
		req("process/signal", `{"processId":"p","signal":"x"}`), req("process/signal", `{"processId":"p","signal":{"interrupt":1}}`),
		req("process/signal", `{"processId":"p","signal":{}}`), req("process/signal", `{"processId":"p","signal":null}`),
		req("http/request", `{"method":"GET","url":"http://x","requestId":"r","redirectPolicy":"x"}`),
		req("http/request", `{"method":"GET","url":"http://x","requestId":"r","headers":null}`),
		req("http/request", `{"method":"GET","url":"http://x","requestId":"r","headers":[{"name":"a"}]}`),
		req("http/request", `{"method":"GET","url":"http://x","requestId":"r","streamResponse":null}`),
		req("process/start", `{"processId":"p","argv":["a"],"cwd":"file:///tmp","env":{"a":1},"tty":false}`),
		req("process/start", `{"processId":"p","argv":"a","cwd":"file:///tmp","env":{},"tty":false}`),
		req("process/start", `{"processId":"p","argv":["a"],"cwd":"file:///tmp","env":[],"tty":false}`),
		req("fs/walk", `{"path":"file:///tmp","options":null}`), req("fs/readBlock", `{"handleId":"h","offset":1,"len":-1}`),
	}
	return cases
}

// binaryCases carry invalid UTF-8, which can only arrive in binary frames.
var binaryCases = []string{
	"{\"id\":1,\"method\":\"zz\",\"x\":\"\xff\"}", "{\"id\":1,\"method\":\"zz\",\"x\xff\":1}",
	"{\"id\":1,\"method\":\"zz\",\"x\":\"\xff\\q\"}", "{\"id\":1,\"method\":\"zz\",\"x\":\"\xed\xa0\x80\"}",
	"{\"id\":1,\"method\":\"zz\"}\xff", "{\"id\":1,\"method\":\"zz\",\"x\":\"\xff",
	"{\"id\":1,\"method\":\"zz\",\"x\":\"\xc0\xaf\"}", "{\"id\":1,\"method\":\"zz\",\"x\":\"\xf4\x90\x80\x80\"}",
}

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/reference_golden.json from the reference binary")

func TestReference_Cases(t *testing.T) {
	refbin.ForEachRelease(t, testReferenceCases)
}

func testReferenceCases(t *testing.T, r refbin.Release) {
	c := reference(t, r).client(t)
	var golden []goldenCase
	update := *updateGolden && r.Version == refbin.Newest // goldens come from the newest
	run := func(msg string, binary bool) {
		compareWithReference(t, c, []byte(msg), binary)
		if update && len(msg) <= maxGoldenInput {
			golden = append(golden, recordGolden(t, c, msg, binary))
		}
	}
	for _, msg := range referenceCases() {
		run(msg, false)
	}
	for _, msg := range binaryCases {
		run(msg, true)
	}
	if update {
		writeGolden(t, goldenPath, golden)
	}
}

// mutate applies one random edit to msg.
func mutate(rng *rand.Rand, msg []byte) []byte {
	const alphabet = "{}[]\":,0123456789.eE+-tfnul \n\t\\/xaé\x00\x1f"
	out := append([]byte(nil), msg...)
	for edits := 1 + rng.IntN(3); edits > 0 && len(out) > 0; edits-- {
		i := rng.IntN(len(out))
		switch rng.IntN(5) {
		case 0: // delete
			out = append(out[:i], out[i+1:]...)
		case 1: // insert
			out = append(out[:i], append([]byte{alphabet[rng.IntN(len(alphabet))]}, out[i:]...)...)
		case 2: // replace
			out[i] = alphabet[rng.IntN(len(alphabet))]
		case 3: // truncate
			out = out[:i]
		case 4: // duplicate a slice
			j := i + rng.IntN(len(out)-i+1)
			out = append(out[:j], append(append([]byte(nil), out[i:j]...), out[j:]...)...)
		}
	}
	return out
}

// referenceSeed is the seed of a randomized reference test: $JSONRPC_REF_SEED when it is
// a number, else def; logged so that a failure can be replayed.
func referenceSeed(t *testing.T, def uint64) uint64 {
	seed := def
	if v, err := strconv.ParseUint(os.Getenv("JSONRPC_REF_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("seed %d", seed)
	return seed
}

// TestReference_Mutations compares a seeded stream of mutated messages. Methods are
// unregistered or side-effect free before initialize, so nothing runs on the reference.
// Every release gets the whole stream (about 0.2 s each under -race).
func TestReference_Mutations(t *testing.T) {
	refbin.ForEachRelease(t, testReferenceMutations)
}

func testReferenceMutations(t *testing.T, r refbin.Release) {
	c := reference(t, r).client(t)
	seed := referenceSeed(t, 20260115)
	rng := rand.New(rand.NewPCG(seed, seed))
	corpus := []string{
		`{"id":1,"method":"zz","params":{"a":[1,2.5,-3e4,true,false,null,"s\n\u00e9"],"b":{"c":{}}}}`,
		`{"id":"x","method":"qq","trace":{"traceparent":"00","tracestate":null}}`,
		`{"id":7,"error":{"code":-32600,"message":"m","data":[1]}}`,
		`{"method":"zz","params":{"k":"v","k2":"v"}}`,
		`{"id":1,"method":"process/read","params":{"processId":"p","afterSeq":5,"maxBytes":10,"waitMs":0}}`,
		`{"id":1,"method":"process/write","params":{"processId":"p","chunk":"aGVsbG8=","writeId":"w"}}`,
		`{"id":1,"method":"process/signal","params":{"processId":"p","signal":"interrupt"}}`,
		`{"id":1,"method":"initialize","params":{"clientName":"c","resumeSessionId":null}}`,
		`{"id":1,"method":"environment/info","params":{}}`,
		`{"id":1,"method":"fs/readBlock","params":{"handleId":"h","offset":0,"len":10}}`,
	}
	n := 600
	if testing.Short() {
		n = 100
	}
	if v, err := strconv.Atoi(os.Getenv("JSONRPC_REF_MUTATIONS")); err == nil {
		n = v
	}
	update := *updateGolden && r.Version == refbin.Newest // goldens come from the newest
	var malformed, requests int
	var golden []goldenCase
	for i := 0; i < n; i++ {
		msg := mutate(rng, []byte(corpus[rng.IntN(len(corpus))]))
		if strings.Contains(string(msg), `"initialize"`) && !strings.Contains(string(msg), `"method":"initialize"`) {
			continue // keep the reference's handshake state predictable
		}
		if _, err := jsonrpc.Parse(msg); err != nil {
			malformed++
		} else {
			requests++
		}
		compareWithReference(t, c, msg, true)
		if update && len(golden) < mutationsGoldenSize {
			golden = append(golden, recordGolden(t, c, string(msg), true))
		}
	}
	t.Logf("%d malformed, %d well-formed", malformed, requests)
	if update {
		writeGolden(t, mutationsGoldenPath, golden)
	}
}
