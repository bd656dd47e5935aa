package policy_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
)

const specExample = `{
  "permissions": {"type": "managed", "network": "restricted",
    "file_system": {"type": "restricted", "glob_scan_max_depth": 4, "entries": [
      {"path": {"type": "special", "value": {"kind": "minimal"}}, "access": "read"},
      {"path": {"type": "special", "value": {"kind": "project_roots"}}, "access": "write"},
      {"path": {"type": "path", "path": "file:///opt/toolchain"}, "access": "read"},
      {"path": {"type": "glob_pattern", "pattern": "secrets/**"}, "access": "deny"}]}},
  "cwd": "file:///srv/work/app",
  "workspaceRoots": ["file:///srv/work/app", "file:///srv/work/shared-lib"],
  "userHomeDir": "file:///home/dev",
  "temporaryDirectories": ["file:///tmp"],
  "windowsSandboxLevel": "disabled",
  "useLegacyLandlock": false
}`

func TestContext_DecodeSpecExample(t *testing.T) {
	var c policy.Context
	if err := json.Unmarshal([]byte(specExample), &c); err != nil {
		t.Fatalf("decoding spec example: %v", err)
	}
	fs := c.Permissions.FileSystem
	if c.Permissions.Type != policy.ProfileManaged || !fs.Restricted || fs.GlobScanMaxDepth != 4 || len(fs.Entries) != 4 {
		t.Fatalf("got %+v, want managed restricted depth 4 with 4 entries", c.Permissions)
	}
	if got, want := fs.Entries[2].Path.URI.String(), "file:///opt/toolchain"; got != want {
		t.Errorf("entry 2 uri: got %q, want %q", got, want)
	}
	if got := fs.Entries[3].Path.Pattern; got != "secrets/**" {
		t.Errorf("glob: got %q, want secrets/**", got)
	}
	if len(c.WorkspaceRoots) != 2 || c.WindowsSandboxLevel != "disabled" {
		t.Errorf("got roots %v level %q", c.WorkspaceRoots, c.WindowsSandboxLevel)
	}
}

func ctxWith(perm string) string {
	return `{"permissions":` + perm + `,"windowsSandboxLevel":"disabled"}`
}

func restrictedWith(entries string) string {
	return ctxWith(`{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[` + entries + `]}}`)
}

func TestContext_DecodeErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"missing level", `{"permissions":{"type":"disabled"}}`, "missing field `windowsSandboxLevel`"},
		{"missing permissions", `{"windowsSandboxLevel":"disabled"}`, "missing field `permissions`"},
		{"legacy sandboxPolicy", `{"sandboxPolicy":{"type":"read-only"},"windowsSandboxLevel":"disabled"}`, "missing field `permissions`"},
		{"untagged legacy", ctxWith(`{"network":{"enabled":true},"file_system":{}}`), "missing field `type`"},
		{"legacy tag", ctxWith(`{"type":"read-only"}`), "unknown variant `read-only`, expected one of `managed`, `disabled`, `external`"},
		{"bad level", `{"permissions":{"type":"disabled"},"windowsSandboxLevel":"x"}`, "unknown variant `x`, expected one of `disabled`, `restricted-token`, `elevated`, `mxc`"},
		{"depth zero", ctxWith(`{"type":"managed","network":"enabled","file_system":{"type":"restricted","entries":[],"glob_scan_max_depth":0}}`), "invalid value: integer `0`, expected a nonzero usize"},
		{"native path", restrictedWith(`{"path":{"type":"path","path":"/opt/x"},"access":"read"}`), "invalid URI: relative URL without a base"},
		{"http scheme", restrictedWith(`{"path":{"type":"path","path":"http://x/y"},"access":"read"}`), "unsupported path URI scheme `http`"},
		{"query", restrictedWith(`{"path":{"type":"path","path":"file:///x?y"},"access":"read"}`), "query parameters are not allowed in path URIs"},
		{"fragment", restrictedWith(`{"path":{"type":"path","path":"file:///x#y"},"access":"read"}`), "fragments are not allowed in path URIs"},
		{"port", restrictedWith(`{"path":{"type":"path","path":"file://h:80/x"},"access":"read"}`), "invalid URI: invalid international domain name"},
		{"unknown kind", restrictedWith(`{"path":{"type":"special","value":{"kind":"home"}},"access":"read"}`),
			"unknown variant `home`, expected one of `root`, `minimal`, `current_working_directory`, `project_roots`, `tmpdir`, `slash_tmp`, `unknown`"},
		{"unknown access", restrictedWith(`{"path":{"type":"special","value":{"kind":"root"}},"access":"all"}`),
			"unknown variant `all`, expected one of `read`, `write`, `deny`, `none`"},
		{"unknown without path", restrictedWith(`{"path":{"type":"special","value":{"kind":"unknown"}},"access":"read"}`), "missing field `path`"},
		{"unknown deny", restrictedWith(`{"path":{"type":"special","value":{"kind":"unknown","path":"x"}},"access":"deny"}`), "unsupported special path in deny entry"},
		{"network bad", ctxWith(`{"type":"external","network":"on"}`), "unknown variant `on`, expected `restricted` or `enabled`"},
		{"null bool", `{"permissions":{"type":"disabled"},"windowsSandboxLevel":"disabled","useLegacyLandlock":null}`, "invalid type: null, expected a boolean"},
		{"context not object", `"x"`, `invalid type: string "x", expected struct FileSystemSandboxContext`},
		{"permissions null", `{"permissions":null,"windowsSandboxLevel":"disabled"}`, "invalid type: null, expected internally tagged enum PermissionProfile"},
		{"entry missing access", restrictedWith(`{"path":{"type":"special","value":{"kind":"root"}}}`), "missing field `access`"},
		{"roots not seq", `{"permissions":{"type":"disabled"},"windowsSandboxLevel":"disabled","workspaceRoots":"file:///x"}`, `invalid type: string "file:///x", expected a sequence`},
		// Strings are rendered as Rust's Debug does (\u{1}, a combining mark escaped), as
		// observed from codex 0.169.0 and 0.171.0, not as Go's %q would (\x01).
		{"depth string", ctxWith(`{"type":"managed","network":"enabled","file_system":{"type":"restricted","entries":[],"glob_scan_max_depth":"a\u0001\u00e9\u0301\t"}}`),
			"invalid type: string \"a\\u{1}é\\u{301}\\t\", expected a nonzero usize"},
		{"depth float", ctxWith(`{"type":"managed","network":"enabled","file_system":{"type":"restricted","entries":[],"glob_scan_max_depth":1.5}}`), "invalid type: floating point `1.5`, expected a nonzero usize"},
		{"number for string", `{"permissions":{"type":"disabled"},"windowsSandboxLevel":5}`, "invalid type: number, expected enum WindowsSandboxLevel"},
		{"duplicate", `{"permissions":{"type":"disabled"},"windowsSandboxLevel":"disabled","cwd":null,"cwd":null}`, "duplicate field `cwd`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c policy.Context
			err := json.Unmarshal([]byte(tt.in), &c)
			if err == nil {
				t.Fatalf("got nil error, want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Fatalf("got %q, want %q", err.Error(), tt.want)
			}
			var pe *policy.Error
			if !errors.As(err, &pe) || pe.Code != jsonwire.CodeInvalidParams {
				t.Fatalf("got %T %v, want *policy.Error with -32602", err, err)
			}
		})
	}
}

func TestContext_DecodeAccepts(t *testing.T) {
	tests := []struct{ name, in string }{
		{"disabled", ctxWith(`{"type":"disabled"}`)},
		{"external", ctxWith(`{"type":"external","network":"enabled"}`)},
		{"unknown fields", `{"permissions":{"type":"disabled","x":1},"windowsSandboxLevel":"mxc","sandboxPolicy":{},"additionalPermissions":{}}`},
		{"none alias", restrictedWith(`{"path":{"type":"special","value":{"kind":"root"}},"access":"none"}`)},
		{"cwd alias", restrictedWith(`{"path":{"type":"special","value":{"kind":"current_working_directory"}},"access":"write"}`)},
		{"skip", restrictedWith(`{"path":{"type":"special","value":{"kind":"tmpdir"}},"access":"write","missing_path_behavior":"skip"}`)},
		{"glob read", restrictedWith(`{"path":{"type":"glob_pattern","pattern":"**/*.pem"},"access":"read"}`)},
		{"unknown read", restrictedWith(`{"path":{"type":"special","value":{"kind":"unknown","path":":weird"}},"access":"read"}`)},
		{"file relative", restrictedWith(`{"path":{"type":"path","path":"file:relative"},"access":"read"}`)},
		{"unc decodes", restrictedWith(`{"path":{"type":"path","path":"file://server/share"},"access":"read"}`)},
		{"null optionals", `{"permissions":{"type":"disabled"},"windowsSandboxLevel":"disabled","cwd":null,"userHomeDir":null,"windowsSandboxProxySettingsMode":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c policy.Context
			if err := json.Unmarshal([]byte(tt.in), &c); err != nil {
				t.Fatalf("got %v, want success", err)
			}
		})
	}
}

func TestPathURI_Parse(t *testing.T) {
	tests := []struct {
		in, native, err string
	}{
		{in: "file:///abs/x", native: "/abs/x"},
		{in: "file:/abs/x", native: "/abs/x"},
		{in: "FILE:///abs/x", native: "/abs/x"},
		{in: "file://LOCALHOST/abs/x", native: "/abs/x"},
		{in: "file:", native: "/"},
		{in: "file://", native: "/"},
		{in: "file:///", native: "/"},
		{in: "file:///%2F", native: "/"},
		{in: "file:///a/b/../x", native: "/a/x"},
		{in: "file:///a/./x", native: "/a/x"},
		{in: "file:///a//x", native: "/a/x"},
		{in: `file:///\tmp`, native: "/tmp"},
		{in: "file:///u%2Fx", native: "/u/x"},
		{in: "file:relative", native: "/relative"},
		{in: "file:///C|/x", native: "/C|/x"},
		{in: "file:///x%20y", native: "/x y"},
		{in: "file://server/share", err: "'file://server/share' is invalid on 'linux'"},
		{in: "file://127.0.0.1/x", err: "'file://127.0.0.1/x' is invalid on 'linux'"},
		{in: "file:///C:/x", err: "'file:///C:/x' is invalid on 'linux'"},
		{in: "file:///a%00b", err: "'file:///a%00b' is invalid on 'linux'"},
		{in: "/tmp/x", err: "invalid URI: relative URL without a base"},
		{in: "", err: "invalid URI: relative URL without a base"},
		{in: "http://x/y", err: "unsupported path URI scheme `http`"},
		{in: "file://user@h/x", err: "invalid URI: invalid international domain name"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			u, err := policy.ParsePathURI(tt.in)
			var native string
			if err == nil {
				native, err = u.Native()
			}
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("got (%q, %v), want error %q", native, err, tt.err)
				}
				return
			}
			if err != nil || native != tt.native {
				t.Fatalf("got (%q, %v), want %q", native, err, tt.native)
			}
		})
	}
}

func TestContext_RoundTripsEntries(t *testing.T) {
	var c policy.Context
	if err := json.Unmarshal([]byte(specExample), &c); err != nil {
		t.Fatal(err)
	}
	wantRoundTrip(t, &c)
}
