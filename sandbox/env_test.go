package sandbox

import (
	"reflect"
	"strings"
	"testing"
)

func TestStageEnv_CarriesTheCommandEnvironmentEncoded(t *testing.T) {
	cmd := []string{"PATH=/usr/bin", "LD_PRELOAD=/w/evil.so", "HOME=/h", "GCONV_PATH=/w", "HOME=/second",
		"NOEQUALS", "=empty-name", "codex-sandbox-env=1", "codex-sandbox-env:LD_AUDIT=/x", "V=a=b"}
	env := stageEnv(cmd)
	want := []string{"codex-sandbox-env=1", "HOME=/h"}
	for _, kv := range cmd {
		want = append(want, "codex-sandbox-env:"+kv)
	}
	if !reflect.DeepEqual(env, want) {
		t.Errorf("stageEnv = %q, want %q", env, want)
	}
	if h := preStageHazard(env); h != "" {
		t.Errorf("stageEnv holds %s", h)
	}
	got, encoded := commandEnv(env)
	if !encoded || !reflect.DeepEqual(got, cmd) {
		t.Errorf("commandEnv = %q, %v; want %q, true", got, encoded, cmd)
	}
	if got := stageEnv(nil); !reflect.DeepEqual(got, []string{"codex-sandbox-env=1"}) {
		t.Errorf("stageEnv(nil) = %q (no HOME when the command has none)", got)
	}
}

func TestCommandEnv_WithoutMarkerIsOwn(t *testing.T) {
	for _, own := range [][]string{
		{"PATH=/bin", "codex-sandbox-env:X=1"},
		{"codex-sandbox-env=2", "codex-sandbox-env:X=1"}, // unknown version
		nil,
	} {
		if got, encoded := commandEnv(own); encoded || !reflect.DeepEqual(got, own) {
			t.Errorf("commandEnv(%q) = %q, %v; want it unchanged, false", own, got, encoded)
		}
	}
}

func TestInnerCommandEnv_TakesBwrapsPWD(t *testing.T) {
	enc := func(bwrapPWD string, cmd ...string) []string {
		own := stageEnv(cmd)
		if bwrapPWD != "" {
			own = append(own, "PWD="+bwrapPWD)
		}
		return own
	}
	tests := []struct {
		name string
		own  []string
		want []string
	}{
		{"appended", enc("/ws", "A=1", "B=2"), []string{"A=1", "B=2", "PWD=/ws"}},
		{"replaced in place", enc("/ws", "A=1", "PWD=/client", "B=2"), []string{"A=1", "PWD=/ws", "B=2"}},
		{"bwrap set none", enc("", "A=1", "PWD=/client"), []string{"A=1", "PWD=/client"}},
		{"not encoded: own as is", []string{"A=1", "PWD=/x"}, []string{"A=1", "PWD=/x"}},
	}
	for _, tt := range tests {
		if got := innerCommandEnv(tt.own); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: innerCommandEnv = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestPreStageHazard(t *testing.T) {
	for _, name := range []string{"LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "LD_DEBUG", "GCONV_PATH", "LOCPATH",
		"MALLOC_CHECK_", "MALLOC_ARENA_MAX", "GLIBC_TUNABLES", "HOSTALIASES", "NLSPATH", "RES_OPTIONS", "TZDIR"} {
		if got := preStageHazard([]string{"HOME=/h", name + "=x"}); got != name {
			t.Errorf("preStageHazard(%s) = %q", name, got)
		}
	}
	for _, kv := range []string{"HOME=/h", "PWD=/", "codex-sandbox-env=1", "codex-sandbox-env:LD_PRELOAD=/x", "PATH=/bin", "LANG=C"} {
		if got := preStageHazard([]string{kv}); got != "" {
			t.Errorf("preStageHazard(%q) = %q, want none", kv, got)
		}
	}
}

// FuzzStageEnv: for any command environment (entries separated by NUL), the stage
// environment holds nothing the loader or libc honours, names no variable but the
// marker and HOME unencoded, and decodes back to the command environment (empty
// entries aside, which no process environment keeps).
func FuzzStageEnv(f *testing.F) {
	f.Add("PATH=/bin\x00LD_PRELOAD=/x.so")
	f.Add("HOME=/h\x00HOME=/g\x00codex-sandbox-env=1\x00codex-sandbox-env:LD_AUDIT=/a")
	f.Add("\x00=\x00NOEQ\x00MALLOC_CHECK_=3\x00PWD=/p")
	f.Fuzz(func(t *testing.T, s string) {
		var cmd []string
		if s != "" {
			cmd = strings.Split(s, "\x00")
		}
		env := stageEnv(cmd)
		if h := preStageHazard(env); h != "" {
			t.Fatalf("%q: stage environment holds %s", s, h)
		}
		for _, kv := range env {
			name, _, _ := strings.Cut(kv, "=")
			if name != stageEnvMarker && name != "HOME" && !strings.HasPrefix(kv, stageEnvPrefix) {
				t.Fatalf("%q: stage environment names %q", s, name)
			}
		}
		var want []string
		for _, kv := range cmd {
			if kv != "" {
				want = append(want, kv)
			}
		}
		got, encoded := commandEnv(env)
		if !encoded || len(got) != len(want) || (len(got) > 0 && !reflect.DeepEqual(got, want)) {
			t.Fatalf("%q: decodes to %q, %v; want %q", s, got, encoded, want)
		}
	})
}
