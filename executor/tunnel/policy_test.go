package tunnel

import (
	"context"
	"errors"
	"net/netip"
	"strconv"
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
	checkResolve(t, "ParsePolicy", ParsePolicy, res, FlagName, func(*RefusedError, error) bool { return true }, []resolveCase{
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
	})
}

// resolveCase is one Resolve of a policy parsed from specs: want is the address, or ""
// for a refusal.
type resolveCase struct {
	specs []string
	host  string
	port  uint16
	want  string // "" = refused
}

// checkResolve runs the cases through parse (named name in failures) and Resolve: a
// refusal must be a *RefusedError whose text names flag and that also passes refused.
func checkResolve(t *testing.T, name string, parse func([]string) (*Policy, error), res Resolver, flag string, refused func(*RefusedError, error) bool, tests []resolveCase) {
	t.Helper()
	for _, tt := range tests {
		p, err := parse(tt.specs)
		if err != nil {
			t.Fatalf("%s(%q): %v", name, tt.specs, err)
		}
		got, err := p.Resolve(context.Background(), res, tt.host, tt.port)
		if tt.want == "" {
			var re *RefusedError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), flag) || !refused(re, err) {
				t.Errorf("%q %s:%d: got %q, %v; want a refusal naming %s", tt.specs, tt.host, tt.port, got, err, flag)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%q %s:%d: got %q, %v; want %q", tt.specs, tt.host, tt.port, got, err, tt.want)
		}
	}
}

// checkParseErrors asserts that parse (named name) rejects every value of bad with an
// error naming flag, that "none" disables the policy and that dflt is enabled.
func checkParseErrors(t *testing.T, name string, parse func([]string) (*Policy, error), flag string, dflt *Policy, bad [][]string) {
	t.Helper()
	for _, s := range bad {
		if p, err := parse(s); err == nil {
			t.Errorf("%s(%q) = %v, want an error", name, s, p)
		} else if !strings.Contains(err.Error(), flag) {
			t.Errorf("%s(%q): %v does not name the flag", name, s, err)
		}
	}
	if p, _ := parse([]string{"none"}); p.Enabled() {
		t.Error("none: Enabled")
	}
	if !dflt.Enabled() {
		t.Error("default: not Enabled")
	}
}

func TestParsePolicy_Errors(t *testing.T) {
	checkParseErrors(t, "ParsePolicy", ParsePolicy, FlagName, DefaultPolicy(),
		[][]string{{"10.0.0.1"}, {"10.0.0.0/33:1"}, {"::1:22"}, {"h:0"}, {"h:9-3"}, {"h:70000"}, {"none", "h:1"}, {":1"}, {"a b:1"}})
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

func TestListenPolicy_Resolve(t *testing.T) {
	res := fakeResolver{"localhost": {netip.MustParseAddr("127.0.0.1")}, "lan": {netip.MustParseAddr("10.0.0.5")}}
	checkResolve(t, "ParseListenPolicy", ParseListenPolicy, res, ListenFlagName, func(re *RefusedError, err error) bool {
		return re.Listen && !strings.Contains(err.Error(), FlagName+" ")
	}, []resolveCase{
		{nil, "127.0.0.1", 8080, "127.0.0.1:8080"},
		{nil, "127.0.0.1", 0, "127.0.0.1:0"}, // ephemeral: the default allows every port
		{nil, "::1", 0, "[::1]:0"},
		{nil, "localhost", 0, "localhost:0"},
		{nil, "0.0.0.0", 8080, ""},
		{nil, "::", 8080, ""},
		{nil, "10.0.0.5", 80, ""},
		{[]string{"none"}, "127.0.0.1", 80, ""},
		{[]string{"0.0.0.0:8080"}, "0.0.0.0", 8080, "0.0.0.0:8080"},
		{[]string{"0.0.0.0:8080"}, "0.0.0.0", 0, ""}, // a range short of every port: no ephemeral bind
		{[]string{"0.0.0.0:8000-9000"}, "0.0.0.0", 9000, "0.0.0.0:9000"},
		{[]string{"0.0.0.0:*"}, "0.0.0.0", 0, "0.0.0.0:0"},
		{[]string{"10.0.0.0/8:*"}, "lan", 0, "10.0.0.5:0"},
		{[]string{"10.0.0.0/8:*"}, "127.0.0.1", 1, ""},
	})
	// The dial policy still refuses port 0.
	if _, err := DefaultPolicy().Resolve(context.Background(), res, "127.0.0.1", 0); err == nil {
		t.Error("dial policy allowed port 0")
	}
}

func TestParseListenPolicy_Errors(t *testing.T) {
	checkParseErrors(t, "ParseListenPolicy", ParseListenPolicy, ListenFlagName, DefaultListenPolicy(),
		[][]string{{"0.0.0.0"}, {"h:0"}, {"none", "h:1"}, {"::1:22"}})
}

func FuzzParseListenPolicy(f *testing.F) {
	for _, s := range []string{"0.0.0.0:8080", "[::]:*", "lan:1-2", "none", "h:9-3", "x:"} {
		f.Add(s, uint16(0))
	}
	f.Fuzz(func(t *testing.T, s string, port uint16) {
		p, err := ParseListenPolicy([]string{s})
		if err != nil {
			return
		}
		addr, err := p.Resolve(context.Background(), fakeResolver{}, "127.0.0.1", port)
		if err == nil && !strings.HasSuffix(addr, ":"+strconv.Itoa(int(port))) {
			t.Fatalf("%q: port %d resolved to %q", s, port, addr)
		}
	})
}
