package jsonrpc_test

// Golden outcomes recorded from the reference binary (go test -run TestReference_Cases
// -update-golden), replayed without it.

import (
	"encoding/json"
	"os"
	"testing"
	"unicode/utf8"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/jsonwire"
)

// Golden files: the hand-picked cases, and a seeded sample of mutated messages.
const (
	goldenPath          = "testdata/reference_golden.json"
	mutationsGoldenPath = "testdata/reference_mutations_golden.json"
	mutationsGoldenSize = 400
)

// maxGoldenInput keeps the multi-megabyte budget cases out of the golden file; the
// unit tests rebuild those.
const maxGoldenInput = 4096

// goldenCase is one recorded reference outcome.
type goldenCase struct {
	In       string `json:"in,omitempty"`       // the message, when it is valid UTF-8
	InBytes  []byte `json:"in_bytes,omitempty"` // the message otherwise (base64 in the file)
	Binary   bool   `json:"binary,omitempty"`   // sent as a binary frame
	Outcome  string `json:"outcome"`            // "malformed", "invalid_params" or "accepted"
	Detail   string `json:"detail,omitempty"`   // decoder text for malformed / invalid_params
	Closed   bool   `json:"closed,omitempty"`   // accepted, and the reference closed the connection
	Echoedid string `json:"echoed_id,omitempty"`
}

func (g goldenCase) input() []byte {
	if g.InBytes != nil {
		return g.InBytes
	}
	return []byte(g.In)
}

func recordGolden(t *testing.T, c *refClient, msg string, binary bool) goldenCase {
	t.Helper()
	g := goldenCase{Binary: binary}
	if utf8.ValidString(msg) {
		g.In = msg
	} else {
		g.InBytes = []byte(msg)
	}
	rep := c.send([]byte(msg), binary)
	switch detail, malformed := rep.parseDetail(); {
	case malformed:
		g.Outcome, g.Detail = "malformed", detail
	case rep.code == jsonwire.CodeInvalidParams:
		g.Outcome, g.Detail, g.Echoedid = "invalid_params", rep.message, string(rep.id)
	default:
		g.Outcome, g.Closed, g.Echoedid = "accepted", rep.closed, string(rep.id)
	}
	return g
}

func writeGolden(t *testing.T, path string, golden []goldenCase) {
	t.Helper()
	out, err := json.MarshalIndent(golden, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d cases to %s", len(golden), path)
}

func TestGolden_Reference(t *testing.T) {
	for _, path := range []string{goldenPath, mutationsGoldenPath} {
		t.Run(path, func(t *testing.T) { checkGolden(t, path) })
	}
}

func checkGolden(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file: %v", err)
	}
	var golden []goldenCase
	if err := json.Unmarshal(data, &golden); err != nil {
		t.Fatalf("decoding golden file: %v", err)
	}
	if len(golden) < 100 {
		t.Fatalf("golden file has %d cases, want at least 100", len(golden))
	}
	for _, g := range golden {
		in := g.input()
		m, err := jsonrpc.Parse(in)
		if g.Outcome == "malformed" {
			if err == nil || err.Error() != g.Detail {
				t.Errorf("Parse(%q): got %v, want %q", in, err, g.Detail)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): got error %q, want success", in, err)
			continue
		}
		if g.Echoedid != "" && m.ID.String() != g.Echoedid {
			t.Errorf("Parse(%q): got id %s, want %s", in, m.ID, g.Echoedid)
		}
		if g.Closed && m.Kind == jsonrpc.KindRequest {
			t.Errorf("Parse(%q): got a request, but the reference closed the connection", in)
		}
		newTarget, ok := paramsTargets[m.Method]
		if m.Kind != jsonrpc.KindRequest || !ok {
			continue
		}
		perr := jsonwire.UnmarshalParams(m.Params, newTarget())
		switch {
		case g.Outcome == "invalid_params" && (perr == nil || perr.(*jsonwire.Error).Message != g.Detail):
			t.Errorf("UnmarshalParams(%s, %s): got %v, want %q", m.Method, m.Params, perr, g.Detail)
		case g.Outcome == "accepted" && perr != nil:
			t.Errorf("UnmarshalParams(%s, %s): got %v, want success", m.Method, m.Params, perr)
		}
	}
}
