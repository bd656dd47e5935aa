package protocol_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

func TestParsePathURI_Canonical(t *testing.T) {
	tests := []struct{ in, want, native string }{
		{"file:///abs/x", "file:///abs/x", "/abs/x"},
		{"file:/abs/x", "file:///abs/x", "/abs/x"},
		{"FILE:///abs/x", "file:///abs/x", "/abs/x"},
		{"file://LOCALHOST/abs/x", "file:///abs/x", "/abs/x"},
		{"file:", "file:///", "/"},
		{"file://", "file:///", "/"},
		{"file:///%2F", "file:///%2F", "/"},
		{"file:///a/b/../x", "file:///a/x", "/a/x"},
		{"file:///a/./x", "file:///a/x", "/a/x"},
		{"file:///a//x", "file:///a//x", "/a/x"},
		{`file:///\tmp`, "file:////tmp", "/tmp"},
		{"file:///u%2Fx", "file:///u%2Fx", "/u/x"},
		{"file:///C|/x", "file:///C|/x", "/C|/x"},
		{"file:///a b", "file:///a%20b", "/a b"},
		{"file:///é", "file:///%C3%A9", "/é"},
		{"file:///%FF", "file:///%FF", "/\xff"},
		{"file:///%00/bad/path/L3RtcC8AYQ", "file:///%00/bad/path/L3RtcC8AYQ", "/tmp/\x00a"},
	}
	for _, tt := range tests {
		got, err := protocol.ParsePathURI(tt.in)
		if err != nil || string(got) != tt.want {
			t.Errorf("ParsePathURI(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			continue
		}
		native, err := got.Native()
		if err != nil || native != tt.native {
			t.Errorf("Native(%q) = %q, %v; want %q", got, native, err, tt.native)
		}
	}
}

func TestParsePathURI_Errors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/tmp/x", "invalid URI: relative URL without a base"},
		{"", "invalid URI: relative URL without a base"},
		{"http://example.com/x", "unsupported path URI scheme `http`"},
		{"file:///x?q", "query parameters are not allowed in path URIs"},
		{"file:///x#f", "fragments are not allowed in path URIs"},
		{"file://user@host/x", "invalid URI: invalid international domain name"},
		{"file://host:80/x", "invalid URI: invalid international domain name"},
		{"file:///a%00b", "'file:///a%00b' is invalid on 'linux'"},
		{"file:///%00/bad/path/L3Rtc", "'file:///%00/bad/path/L3Rtc' is invalid on 'linux'"},
		{"file://[::1/x", "invalid URI: invalid IPv6 address"},
		{"file://999.1.1.1/x", "invalid URI: invalid IPv4 address"},
	}
	for _, tt := range tests {
		_, err := protocol.ParsePathURI(tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("ParsePathURI(%q) error = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestPathURI_NativeForeign(t *testing.T) {
	tests := []struct{ in, want string }{
		{"file://server/share/x", "'file://server/share/x' is invalid on 'linux'"},
		{`file:\\server\share`, "'file://server/share' is invalid on 'linux'"},
		{"file:///c:/x", "'file:///C:/x' is invalid on 'linux'"},
		{"file://server/C:/x", "'file:///C:/x' is invalid on 'linux'"},
		{"file://C|/x", "'file:///C:/x' is invalid on 'linux'"},
		{"file://0x7f.1/x", "'file://127.0.0.1/x' is invalid on 'linux'"},
		{"file://[::ffff:1.2.3.4]/x", "'file://[::ffff:102:304]/x' is invalid on 'linux'"},
		{"file:///%00/bad/path/YQ", "'file:///%00/bad/path/YQ' is invalid on 'linux'"},
		{"file:///%00/bad/path/L3RtcA", "'file:///%00/bad/path/L3RtcA' is invalid on 'linux'"},
	}
	for _, tt := range tests {
		u, err := protocol.ParsePathURI(tt.in)
		if err != nil {
			t.Errorf("ParsePathURI(%q): %v", tt.in, err)
			continue
		}
		_, err = u.Native()
		var ip *protocol.InvalidPathError
		if !errors.As(err, &ip) || err.Error() != tt.want {
			t.Errorf("Native(%q) error = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestPathURI_NativeCwd(t *testing.T) {
	_, err := protocol.PathURI("file://server/share/x").NativeCwd()
	var rpc *jsonwire.Error
	want := "cwd URI `file://server/share/x` is not valid on this exec-server host: 'file://server/share/x' is invalid on 'linux'"
	if !errors.As(err, &rpc) || rpc.Code != jsonwire.CodeInvalidParams || rpc.Message != want {
		t.Errorf("NativeCwd error = %v, want -32602 %q", err, want)
	}
}

func TestPathURI_UnmarshalJSON(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{`"file:///x"`, "file:///x", ""},
		{`"file://localhost/a/../b"`, "file:///b", ""},
		{`"/tmp/x"`, "", "invalid URI: relative URL without a base"},
		{`null`, "", "invalid type: null, expected a string"},
		{`5`, "", "invalid type: number, expected a string"},
		{`true`, "", "invalid type: boolean `true`, expected a string"},
	}
	for _, tt := range tests {
		var p protocol.PathURI
		err := json.Unmarshal([]byte(tt.in), &p)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("Unmarshal(%s) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || string(p) != tt.want {
			t.Errorf("Unmarshal(%s) = %q, %v; want %q", tt.in, p, err, tt.want)
		}
	}
}

func TestFromNative(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/", "file:///"},
		{"/tmp/x", "file:///tmp/x"},
		{"/a/./b//c/", "file:///a/b/c"},
		{"/a b/\t/\n", "file:///a%20b/%09/%0A"},
		{"/!$&'()*+,-.:;=@[]^_|~", "file:///!$&'()*+,-.:;=@[]^_|~"},
		{"/\"#%<>?\\`{}\x7f", "file:///%22%23%25%3C%3E%3F%5C%60%7B%7D%7F"},
		{"/é\xff", "file:///%C3%A9%FF"},
		{"/tmp/\x00a", "file:///%00/bad/path/L3RtcC8AYQ"},
	}
	for _, tt := range tests {
		if got := protocol.FromNative(tt.in); string(got) != tt.want {
			t.Errorf("FromNative(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzPathURI(f *testing.F) {
	for _, s := range []string{"file:///a/b", "file://localhost/x", "file:///%00/bad/path/L3Rtcy9h", "file://[::1]/x",
		"file:///c:/x", "file://C|/x", `file:\\s\x`, "file:///a/%2e%2E/b", "http://a:1/", "file://ü/x", "file:///%FF"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := protocol.ParsePathURI(s)
		if err != nil {
			return
		}
		// Canonical forms are fixed points.
		again, err := protocol.ParsePathURI(string(u))
		if err != nil || again != u {
			t.Fatalf("reparse of %q (from %q) = %q, %v", u, s, again, err)
		}
		native, err := u.Native()
		if err != nil {
			return
		}
		if !strings.HasPrefix(native, "/") {
			t.Fatalf("Native(%q) = %q, not absolute", u, native)
		}
	})
}

func FuzzFromNative(f *testing.F) {
	for _, s := range []string{"/", "/tmp/x", "/a b/%41", "/\x00", "/é\xff", "/a/../b", "/C:/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if !strings.HasPrefix(p, "/") {
			return
		}
		uri := protocol.FromNative(p)
		parsed, err := protocol.ParsePathURI(string(uri))
		if err != nil || parsed != uri {
			t.Fatalf("ParsePathURI(FromNative(%q) = %q) = %q, %v", p, uri, parsed, err)
		}
		native, err := parsed.Native()
		clean := cleanPath(p)
		if isDriveLike(clean) {
			// A drive-shaped first component reads as a Windows URI, as in the reference.
			return
		}
		if err != nil || native != clean {
			t.Fatalf("Native(FromNative(%q)) = %q, %v; want %q", p, native, err, clean)
		}
	})
}
