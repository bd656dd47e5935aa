package whatwg_test

import (
	"errors"
	"testing"

	"github.com/execlab/executor/internal/whatwg"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		err      error
		query    bool
		fragment bool
	}{
		{in: "file:///a/b", want: "file:///a/b"},
		{in: "  FILE:///a\t/b\n ", want: "file:///a/b"},
		{in: "file://localhost/x", want: "file:///x"},
		{in: "file://LOCALHOST/x", want: "file:///x"},
		{in: "file://Server/share", want: "file://server/share"},
		{in: "file:///a/%2e%2E/b", want: "file:///b"},
		{in: "file:///a/./b/..", want: "file:///a/"},
		{in: `file:\\host\x`, want: "file://host/x"},
		{in: "file://C|/x", want: "file:///C:/x"},
		{in: "file:///a b/é", want: "file:///a%20b/%C3%A9"},
		{in: "file://0x7f.1/x", want: "file://127.0.0.1/x"},
		{in: "file://[0:0::1]/x", want: "file://[::1]/x"},
		{in: "file:///x?q", want: "file:///x", query: true},
		{in: "file:///x#f", want: "file:///x", fragment: true},
		{in: "/x", err: whatwg.ErrRelativeWithoutBase},
		{in: "file://a%/x", err: whatwg.ErrIdna},
		{in: "file://1.2.3.256/x", err: whatwg.ErrInvalidIPv4},
		{in: "file://[1::2::3]/x", err: whatwg.ErrInvalidIPv6},
		{in: "http://:80/", err: whatwg.ErrEmptyHost},
		{in: "http://a:65536/", err: whatwg.ErrInvalidPort},
	} {
		u, err := whatwg.Parse(tt.in)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("Parse(%q): err %v, want %v", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := u.Serialize(); got != tt.want || u.Query != tt.query || u.Fragment != tt.fragment {
			t.Errorf("Parse(%q) = %q query %v fragment %v, want %q %v %v", tt.in, got, u.Query, u.Fragment, tt.want, tt.query, tt.fragment)
		}
	}
	u, err := whatwg.Parse("HTTPS://example.com/")
	if err != nil || u.Scheme != "https" {
		t.Errorf("Parse of an https URL: %+v, %v; want scheme https", u, err)
	}
}

func TestIPv4(t *testing.T) {
	for in, want := range map[string]uint32{
		"127.0.0.1": 0x7f000001, "127.1": 0x7f000001, "0x7f.0.0.1": 0x7f000001, "0177.0.0.1": 0x7f000001,
		"2130706433": 0x7f000001, "127.0.0.1.": 0x7f000001, "0x": 0,
	} {
		if got, ok := whatwg.ParseIPv4(in); !ok || got != want {
			t.Errorf("ParseIPv4(%q) = %#x, %v; want %#x", in, got, ok, want)
		}
	}
	for _, in := range []string{"256.0.0.1", "1.2.3.4.5", "4294967296", "1..2", "0x1g", "99999999999999999999999"} {
		if got, ok := whatwg.ParseIPv4(in); ok {
			t.Errorf("ParseIPv4(%q) = %#x, want failure", in, got)
		}
	}
}

func TestPercent(t *testing.T) {
	if got := whatwg.PercentDecode("a%41%4g%%2"); got != "aA%4g%%2" {
		t.Errorf("PercentDecode = %q", got)
	}
	if got := whatwg.PercentEncode("a b%/\\?é", whatwg.InSpecialSegmentSet); got != "a%20b%25%2F%5C%3F%C3%A9" {
		t.Errorf("PercentEncode(segment) = %q", got)
	}
	if got := whatwg.PercentEncode("u:p@x", whatwg.InUserinfoSet); got != "u%3Ap%40x" {
		t.Errorf("PercentEncode(userinfo) = %q", got)
	}
}

// FuzzParse checks that Parse never panics, that a parsed file URL's serialization parses
// back to itself (the canonical form is a fixed point), and that its host does too.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"file:///a/b", "file://localhost/x", "file://[::1]/x", "file://C|/x", `file:\\s\x`,
		"file:///a/%2e%2E/b", "http://a:1/", "file://ü/x", "file:///%FF", "file://0x7f.1/", "ws://[1::", "file:?#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := whatwg.Parse(s)
		if err != nil || u.Scheme != "file" {
			return
		}
		canon := u.Serialize()
		again, err := whatwg.Parse(canon)
		if err != nil || again.Serialize() != canon {
			t.Fatalf("Parse(%q) = %q; reparse: %v, %v", s, canon, again, err)
		}
		if u.Host != "" {
			h, err := whatwg.ParseHost(u.Host)
			if err != nil || h != u.Host {
				t.Fatalf("host %q of %q reparses as %q, %v", u.Host, s, h, err)
			}
		}
	})
}
