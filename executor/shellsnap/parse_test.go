package shellsnap

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	out := "startup noise\n" + captureMarker + "set -o noclobber\nf () \n{ \n    echo f\n}\n\x00A=1\x00B=x=y\x00PWD=/p\x00OLDPWD=/o\x00_=/usr/bin/env\x00" + envChunkPrefix + "0=zz\x00EMPTY=\x00"
	s, err := Parse(KindBash, []byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.State, "set -o noclobber\n") || strings.Contains(s.State, "\x00") {
		t.Errorf("state %q", s.State)
	}
	want := map[string]string{"A": "1", "B": "x=y", "EMPTY": ""}
	if len(s.Env) != len(want) {
		t.Errorf("env %v, want %v", s.Env, want)
	}
	for k, v := range want {
		if got, ok := s.Env[k]; !ok || got != v {
			t.Errorf("env[%s] = %q, %v; want %q", k, got, ok, v)
		}
	}
}

func TestParseFailures(t *testing.T) {
	cases := []struct {
		out  string
		want error
	}{
		{"no marker at all", errNoMarker},
		{captureMarker + "state without end", errNoState},
		{captureMarker + "s\x00NOEQUALS\x00", errBadEnvEntry},
		{captureMarker + "s\x00=v\x00", errBadEnvEntry},
		{captureMarker + strings.Repeat("x", MaxStateBytes+1), errStateTooBig},
		{strings.Repeat("x", MaxCaptureOutput+1), errOutputTooBig},
	}
	for _, c := range cases {
		if _, err := Parse(KindBash, []byte(c.out)); !errors.Is(err, c.want) {
			t.Errorf("Parse(%.30q…) = %v, want %v", c.out, err, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(captureMarker + "set -o noclobber\n\x00A=1\x00B=2\x00"))
	f.Add([]byte("noise" + captureMarker + "\x00"))
	f.Add([]byte(captureMarker + captureMarker + "\x00=\x00"))
	f.Add([]byte("x\x00y"))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := Parse(KindSh, in)
		if err != nil {
			return
		}
		if strings.Contains(s.State, "\x00") || len(s.State) > MaxStateBytes {
			t.Fatalf("state %q", s.State)
		}
		for k, v := range s.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") || strings.Contains(v, "\x00") || notRestored[k] || strings.HasPrefix(k, envChunkPrefix) {
				t.Fatalf("env entry %q=%q", k, v)
			}
		}
		if !bytes.Contains(in, []byte(captureMarker)) {
			t.Fatal("parsed without a marker")
		}
	})
}
