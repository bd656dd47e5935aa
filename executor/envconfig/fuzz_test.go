package envconfig

import (
	"encoding/json"
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// FuzzParseMarshal: any document Parse accepts re-serializes to TOML that parses back
// to the same value and prints identically (the reference's output is valid TOML that
// its own parser reads back), and projection never panics.
func FuzzParseMarshal(f *testing.F) {
	for _, s := range []string{
		"model = \"m\"\n[mcp_servers.a]\nurl = \"u\"\nargs = [\"x\", 1]\n",
		"a = [1, {x = 1, y = {}}]\n[[aot]]\n[aot.sub]\nz = 1\n[[aot]]\n",
		"s = \"a\\\"\\\"\\\"b\\nc\"\nt = '''x\ny'''\nk = \"\\u0001\"\n",
		"d = 1979-05-27 07:32:00.100-00:00\nt = 07:32:00\nf = -nan\ng = 1e300\n",
		"\"\" = 1\n'k\"q' = 2\ndot.ted = 3\n",
	} {
		f.Add([]byte(s), "mcp_servers", "a")
	}
	f.Fuzz(func(t *testing.T, data []byte, k1, k2 string) {
		tab, err := Parse(data)
		if err != nil {
			return
		}
		out := Marshal(tab)
		back, err := Parse([]byte(out))
		if err != nil {
			t.Fatalf("Marshal output does not parse: %v\ninput %q\noutput %q", err, data, out)
		}
		if again := Marshal(back); again != out {
			t.Fatalf("not stable:\n%q\n%q", out, again)
		}
		if p := Project(tab, [][]string{{k1}, {k1, k2}, {k2}}); p != nil {
			_ = Marshal(p)
		}
	})
}

// FuzzDecodeParams: the params decoder never panics, and what it accepts re-encodes
// and decodes to the same params.
func FuzzDecodeParams(f *testing.F) {
	for _, s := range []string{
		`{"cwd":"file:///tmp","configPaths":[["mcp_servers"]],"requirementsPaths":[["mcp_servers"]]}`,
		`["file:///tmp",[["a"]],[]]`, `null`, `{}`, `[]`, `{"cwd":1}`,
		`{"cwd":"file:///C:/x","configPaths":[[""]],"requirementsPaths":[],"sandbox":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var p protocol.EnvironmentConfigReadParams
		if err := jsonwire.UnmarshalParams(raw, &p); err != nil {
			if _, ok := err.(*jsonwire.Error); !ok {
				t.Fatalf("error %T is not a *jsonwire.Error", err)
			}
			return
		}
		b, err := json.Marshal(&p)
		if err != nil {
			t.Fatal(err)
		}
		var q protocol.EnvironmentConfigReadParams
		if err := jsonwire.UnmarshalParams(b, &q); err != nil {
			t.Fatalf("re-decoding %s: %v", b, err)
		}
	})
}
