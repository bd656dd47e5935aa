package jsonrpc_test

// Randomised params differential: typed params objects whose members get random JSON
// values of every type, compared with the reference's -32602 text.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/execlab/executor/internal/refbin"
)

// randomScalar returns a random JSON scalar, biased towards decoder edge cases.
func randomScalar(rng *rand.Rand) string {
	scalars := []string{
		"null", "true", "false", "0", "-0", "1", "-1", "1.5", "1.0", "1e3", "1E-2", "-0.0",
		"255", "256", "65535", "65536", "2147483647", "2147483648", "-2147483649",
		"4294967296", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
		"18446744073709551615", "18446744073709551616", "1e400", "-1e400",
		`""`, `"x"`, `"interrupt"`, `"follow"`, `"stop"`, `"aGk="`, `"aGk"`, `"a"`, `"YWJj"`, `"YR=="`,
		`"\u0000"`, `"a\"b\\c"`, `"\n\t\r"`, `"\u00e9\u0301"`, `"\ud83d\ude00"`, `"\u007f\u0085"`, `"1"`,
	}
	return scalars[rng.IntN(len(scalars))]
}

// randomValue returns a random JSON value of depth at most depth.
func randomValue(rng *rand.Rand, depth int) string {
	if depth <= 0 || rng.IntN(3) > 0 {
		return randomScalar(rng)
	}
	n := rng.IntN(3)
	parts := make([]string, n)
	if rng.IntN(2) == 0 {
		for i := range parts {
			parts[i] = randomValue(rng, depth-1)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	keys := []string{"interrupt", "follow", "stop", "a", "name", "value"}
	for i := range parts {
		parts[i] = strconv.Quote(keys[(i+rng.IntN(len(keys)))%len(keys)]) + ":" + randomValue(rng, depth-1)
	}
	// Keys may repeat by chance; the reference rejects that at parse level, which is
	// compared too.
	return "{" + strings.Join(parts, ",") + "}"
}

// paramsShape lists a method's members: fixed ones keep the message off paths our
// mirrors do not model (PathUri parsing); random ones get random values.
type paramsShape struct {
	method string
	fixed  map[string]string
	random []string
	nested map[string]func(rng *rand.Rand) string
	// partialMirror marks methods whose mirror type omits some of the reference's
	// fields, so sequence-form params cannot be compared.
	partialMirror bool
}

func (p paramsShape) generate(rng *rand.Rand) string {
	if rng.IntN(12) == 0 {
		if p.partialMirror {
			return randomScalar(rng) // our mirror lacks fields: no sequence form
		}
		return randomValue(rng, 2) // not an object at all
	}
	var members []string
	for k, v := range p.fixed {
		if rng.IntN(10) > 0 {
			members = append(members, strconv.Quote(k)+":"+v)
		}
	}
	for _, k := range p.random {
		if rng.IntN(4) == 0 {
			continue
		}
		v := randomValue(rng, 2)
		if gen, ok := p.nested[k]; ok && rng.IntN(2) == 0 {
			v = gen(rng)
		}
		members = append(members, strconv.Quote(k)+":"+v)
	}
	if rng.IntN(5) == 0 {
		members = append(members, `"unknown":`+randomValue(rng, 2))
	}
	rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	return "{" + strings.Join(members, ",") + "}"
}

var paramsShapes = []paramsShape{
	{method: "process/read", random: []string{"processId", "afterSeq", "maxBytes", "waitMs"}},
	{method: "process/write", random: []string{"processId", "chunk", "writeId"}},
	{method: "process/signal", random: []string{"processId", "signal"}},
	{method: "environment/info"},
	{method: "fs/readBlock", random: []string{"handleId", "offset", "len"}},
	{
		method:        "process/start",
		partialMirror: true,
		fixed:         map[string]string{"cwd": `"file:///tmp"`},
		random:        []string{"processId", "argv", "env", "tty", "pipeStdin", "arg0"},
		nested: map[string]func(rng *rand.Rand) string{
			"argv": func(rng *rand.Rand) string { return "[" + randomScalar(rng) + "," + randomScalar(rng) + "]" },
			"env":  func(rng *rand.Rand) string { return `{"A":` + randomScalar(rng) + `,"B":"b"}` },
		},
	},
	{
		method: "http/request",
		random: []string{"method", "url", "headers", "bodyBase64", "timeoutMs", "redirectPolicy", "requestId", "streamResponse"},
		nested: map[string]func(rng *rand.Rand) string{
			"headers": func(rng *rand.Rand) string {
				return `[{"name":` + randomScalar(rng) + `,"value":` + randomScalar(rng) + `,"valueEnvVar":` + randomScalar(rng) + `}]`
			},
		},
	},
	{
		method:        "fs/walk",
		partialMirror: true,
		fixed:         map[string]string{"path": `"file:///tmp"`},
		random:        []string{"options"},
		nested: map[string]func(rng *rand.Rand) string{
			"options": func(rng *rand.Rand) string {
				var m []string
				for _, k := range []string{"maxDepth", "maxDirectories", "maxEntries", "followDirectorySymlinks", "pruneHiddenDirectories"} {
					if rng.IntN(6) > 0 {
						m = append(m, strconv.Quote(k)+":"+randomScalar(rng))
					}
				}
				return "{" + strings.Join(m, ",") + "}"
			},
		},
	},
}

// TestReference_RandomParams sends a seeded stream of random params to every release
// (about 1 s each under -race).
func TestReference_RandomParams(t *testing.T) {
	refbin.ForEachRelease(t, testReferenceRandomParams)
}

func testReferenceRandomParams(t *testing.T, r refbin.Release) {
	c := reference(t, r).client(t)
	seed := referenceSeed(t, 7)
	rng := rand.New(rand.NewPCG(seed, ^seed))
	n := 1500
	if testing.Short() {
		n = 200
	}
	if v, err := strconv.Atoi(os.Getenv("JSONRPC_REF_MUTATIONS")); err == nil {
		n = v
	}
	for i := 0; i < n; i++ {
		shape := paramsShapes[rng.IntN(len(paramsShapes))]
		msg := fmt.Sprintf(`{"id":%d,"method":%q,"params":%s}`, i, shape.method, shape.generate(rng))
		compareWithReference(t, c, []byte(msg), false)
	}
}
