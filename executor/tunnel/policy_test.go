package tunnel

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

type fakeResolver map[string][]netip.Addr

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, errors.New("no such host")
}

func TestPolicy_Resolve(t *testing.T) {
	res := fakeResolver{
		"localhost": {netip.MustParseAddr("127.0.0.1")},
		"db":        {netip.MustParseAddr("10.0.0.5")},
		"evil":      {netip.MustParseAddr("169.254.169.254")},
	}
	tests := []struct {
		specs []string
		host  string
		port  uint16
		want  string // "" = refused
	}{
		{nil, "127.0.0.1", 8080, "127.0.0.1:8080"},
		{nil, "127.1.2.3", 1, "127.1.2.3:1"},
		{nil, "::1", 22, "[::1]:22"},
		{nil, "localhost", 3000, "localhost:3000"},
		{nil, "10.0.0.5", 5432, ""},
		{nil, "db", 5432, ""},
		{nil, "::ffff:127.0.0.1", 80, "127.0.0.1:80"},
		{[]string{"none"}, "127.0.0.1", 80, ""},
		{[]string{"10.0.0.0/8:5432"}, "db", 5432, "10.0.0.5:5432"},
		{[]string{"10.0.0.0/8:5432"}, "db", 5433, ""},
		{[]string{"10.0.0.0/8:5432"}, "127.0.0.1", 5432, ""},
		{[]string{"10.0.0.0/8:5000-6000"}, "10.9.9.9", 6000, "10.9.9.9:6000"},
		{[]string{"db:*"}, "DB", 1, "DB:1"},
		{[]string{"db:*"}, "evil", 1, ""},
		{[]string{"[fd00::/8]:443"}, "fd00::1", 443, "[fd00::1]:443"},
		{[]string{"10.0.0.1:80"}, "10.0.0.1", 80, "10.0.0.1:80"},
		{nil, "bad host!", 80, ""},
		{nil, "127.0.0.1", 0, ""},
	}
	for _, tt := range tests {
		p, err := ParsePolicy(tt.specs)
		if err != nil {
			t.Fatalf("ParsePolicy(%q): %v", tt.specs, err)
		}
		got, err := p.Resolve(context.Background(), res, tt.host, tt.port)
		if tt.want == "" {
			var re *RefusedError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), FlagName) {
				t.Errorf("%q %s:%d: got %q, %v; want a refusal naming %s", tt.specs, tt.host, tt.port, got, err, FlagName)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q %s:%d: got %q, %v; want %q", tt.specs, tt.host, tt.port, got, err, tt.want)
		}
	}
}

func TestParsePolicy_Errors(t *testing.T) {
	for _, s := range [][]string{{"10.0.0.1"}, {"10.0.0.0/33:1"}, {"::1:22"}, {"h:0"}, {"h:9-3"}, {"h:70000"}, {"none", "h:1"}, {":1"}, {"a b:1"}} {
		if p, err := ParsePolicy(s); err == nil {
			t.Errorf("ParsePolicy(%q) = %v, want an error", s, p)
		} else if !strings.Contains(err.Error(), FlagName) {
			t.Errorf("ParsePolicy(%q): %v does not name the flag", s, err)
		}
	}
	if p, _ := ParsePolicy([]string{"none"}); p.Enabled() {
		t.Error("none: Enabled")
	}
	if !DefaultPolicy().Enabled() {
		t.Error("default: not Enabled")
	}
}

func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{"127.0.0.0/8:1-65535", "[::1]:22", "db:*", "none", "h:9-3", "[fd00::/8]:443", "x:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePolicy([]string{s})
		if err != nil {
			return
		}
		_, _ = p.Resolve(context.Background(), fakeResolver{}, "127.0.0.1", 80)
		_ = p.String()
	})
}
