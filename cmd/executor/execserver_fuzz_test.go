package main

import (
	"strings"
	"testing"
)

// FuzzExecServerArgs: the clap-style parser never panics, and what it accepts satisfies the
// table's conflicts and requirements.
func FuzzExecServerArgs(f *testing.F) {
	for _, s := range []string{
		"--listen ws://127.0.0.1:0", "-c foo=1 -cbar --enable x", "--remote u --environment-id e --aws-sigv4",
		"--strict-config=true", "forward --connect ws://x", "--listen=stdio --listen stdio", "-- x", "-",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		c := &clapCommand{name: "exec-server", args: execServerArgs(false), subcommands: []string{"forward"}}
		m, err := c.parse(strings.Fields(line), func(string) (string, bool) { return "", false })
		if err != nil || m.sub != "" {
			return
		}
		if m.has("remote") && (m.has("listen") || !m.has("environment-id")) {
			t.Errorf("%q: accepted --remote with --listen or without --environment-id", line)
		}
		if m.has("aws-profile") && !m.has("aws-sigv4") {
			t.Errorf("%q: accepted --aws-profile without --aws-sigv4", line)
		}
	})
}

// FuzzCodexConfig: config.toml and -c checks never panic, on any input.
func FuzzCodexConfig(f *testing.F) {
	for _, s := range []string{"model = \"o3\"\n", "[features]\nunified_exec = 3\n", "this is = = bad", "a.b.c = [1,\n", "[[x]]\ny=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		_ = checkConfigTOML("config.toml", []byte(body))
		_ = checkOverride(body)
	})
}

func TestCodexConfig_Strict(t *testing.T) {
	tests := []struct {
		body, want string
	}{
		{"model = \"o3\"\n[features]\nunified_exec = true\n", ""},
		{"foo = 1\n", "config.toml:1:1: unknown configuration field `foo`"},
		{"model = \"o3\"\n[features]\nbogus_feature = true\n", "config.toml:3:1: unknown configuration field `features.bogus_feature`"},
		{"[features]\nunified_exec = \"yes\"\n", "config.toml:2:16: invalid type: string \"yes\", expected a boolean"},
		{"[nope]\nx = 1\n", "config.toml:1:2: unknown configuration field `nope`"},
		{"model = 3\n", "config.toml:1:9: invalid type: integer `3`, expected a string"},
	}
	for _, tt := range tests {
		err := checkConfigTOML("config.toml", []byte(tt.body))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%q: got %q, want %q", tt.body, got, tt.want)
		}
	}
	for o, want := range map[string]string{
		"model=\"o3\"":               "",
		"features.unified_exec=true": "",
		"foo":                        "Invalid override (missing '='): foo",
		"=3":                         "Empty key in override: =3",
		"foo=1":                      "unknown configuration field `foo` in -c/--config override",
		"features.x=true":            "unknown configuration field `features.x` in -c/--config override",
	} {
		got := ""
		if err := checkOverride(o); err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("-c %q: got %q, want %q", o, got, want)
		}
	}
}
