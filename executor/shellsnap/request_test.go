package shellsnap

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/execlab/executor/jsonwire"
)

// Decoding texts observed from codex 0.171.0 (spec/capabilities-0.171.0.md §3.1 and
// the shell_snapshot_decode_errors scenario).
func TestDecodeTexts(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{}`, "missing field `scopeId`"},
		{`{"scopeId":1}`, "invalid type: number, expected a string"},
		{`{"shell":{}}`, "missing field `name`"},
		{`{"scopeId":"a","shell":"x"}`, `invalid type: string "x", expected struct ShellInfo`},
		{`{"scopeId":"a","shell":{"name":"bash"}}`, "missing field `path`"},
		{`["a"]`, "invalid length 1, expected struct ShellSnapshotRequest with 2 elements"},
		{`[]`, "invalid length 0, expected struct ShellSnapshotRequest with 2 elements"},
		{`5`, "invalid type: number, expected struct ShellSnapshotRequest"},
		{`"s"`, `invalid type: string "s", expected struct ShellSnapshotRequest`},
		{`{"scopeId":null,"shell":{"name":"bash","path":"/bin/bash"}}`, "invalid type: null, expected a string"},
		{`["a",{"name":"bash","path":"/bin/bash"},1]`, "invalid length 3, expected fewer elements in array"},
	}
	for _, c := range cases {
		_, err := Decode(json.RawMessage(c.in))
		var je *jsonwire.Error
		if !asWire(err, &je) || je.Code != jsonwire.CodeInvalidParams || je.Message != c.want {
			t.Errorf("Decode(%s) = %v, want -32602 %q", c.in, err, c.want)
		}
	}
	for _, in := range []string{``, `null`, ` null `} {
		if r, err := Decode(json.RawMessage(in)); r != nil || err != nil {
			t.Errorf("Decode(%q) = %v, %v; want nil, nil", in, r, err)
		}
	}
	r, err := Decode(json.RawMessage(`["s",["bash","/bin/bash"]]`))
	if err != nil || r.ScopeID != "s" || r.Shell != (ShellInfo{"bash", "/bin/bash"}) {
		t.Fatalf("sequence form: %+v, %v", r, err)
	}
}

func asWire(err error, out **jsonwire.Error) bool {
	e, ok := err.(*jsonwire.Error)
	*out = e
	return ok
}

func TestPlan(t *testing.T) {
	bash := &Request{ScopeID: "t:e", Shell: ShellInfo{"bash", "/bin/bash"}}
	cases := []struct {
		r     *Request
		argv  []string
		kind  Kind
		apply bool
		err   string
	}{
		{bash, []string{"/bin/bash", "-lc", "x"}, KindBash, true, ""},
		{bash, []string{"/bin/bash", "-lc", "x", "a0", "a1"}, KindBash, true, ""},
		{bash, []string{"/bin/bash", "-c", "x"}, 0, false, ""},
		{bash, []string{"bash", "-lc", "x"}, 0, false, ""},
		{bash, []string{"/bin/bash", "-lc"}, 0, false, ""},
		{&Request{ScopeID: "", Shell: bash.Shell}, []string{"/bin/bash", "-c", "x"}, 0, false, "scope"},
		{&Request{ScopeID: strings.Repeat("x", MaxScopeBytes), Shell: bash.Shell}, []string{"/bin/bash", "-lc", "x"}, KindBash, true, ""},
		{&Request{ScopeID: strings.Repeat("x", MaxScopeBytes+1), Shell: bash.Shell}, []string{"/bin/bash", "-lc", "x"}, 0, false, "scope"},
		{&Request{ScopeID: "a", Shell: ShellInfo{"fish", "/bin/bash"}}, []string{"/bin/bash", "-lc", "x"}, 0, false, "shell snapshots are unsupported for shell `fish`"},
		{&Request{ScopeID: "a", Shell: ShellInfo{"fish", "/bin/bash"}}, []string{"/bin/bash", "-c", "x"}, 0, false, ""},
		{&Request{ScopeID: "a", Shell: ShellInfo{"zsh", "/bin/zsh"}}, []string{"/bin/zsh", "-lc", "x"}, KindZsh, true, ""},
		{&Request{ScopeID: "a", Shell: ShellInfo{"sh", "/bin/sh"}}, []string{"/bin/sh", "-lc", "x"}, KindSh, true, ""},
	}
	for i, c := range cases {
		kind, apply, err := c.r.Plan(c.argv)
		switch {
		case c.err == "scope":
			if err != errScope {
				t.Errorf("%d: err %v, want the scope error", i, err)
			}
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%d: err %v, want %q", i, err, c.err)
			}
		case err != nil || kind != c.kind || apply != c.apply:
			t.Errorf("%d: Plan = %v %v %v, want %v %v", i, kind, apply, err, c.kind, c.apply)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{}`, `null`, `{"scopeId":"a","shell":{"name":"bash","path":"/bin/bash"}}`,
		`["a",["zsh","/bin/zsh"]]`, `{"shell":{"name":1}}`, `[1,2,3]`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := Decode(json.RawMessage(in))
		if err != nil {
			if _, ok := err.(*jsonwire.Error); !ok {
				t.Fatalf("non-wire error %T %v", err, err)
			}
			return
		}
		if r == nil {
			return
		}
		// Plan never panics and only applies to argv that start with shell.path -lc.
		argv := []string{r.Shell.Path, "-lc", "true"}
		if _, apply, err := r.Plan(argv); apply && err != nil {
			t.Fatalf("apply with error %v", err)
		}
	})
}
