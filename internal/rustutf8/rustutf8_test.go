package rustutf8_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/execlab/executor/internal/rustutf8"
)

// TestRules: from_utf8_lossy's replacement (each maximal invalid subpart becomes one
// U+FFFD) and str::from_utf8's Utf8Error text ("" for valid input), as the reference
// words them, for each input.
func TestRules(t *testing.T) {
	for _, tt := range []struct{ in, lossy, errText string }{
		{"ok é 中 😀", "ok é 中 😀", ""},
		{"\xff", "\uFFFD", "invalid utf-8 sequence of 1 bytes from index 0"},
		{"a\xc3", "a\uFFFD", "incomplete utf-8 byte sequence from index 1"},
		{"ab\xe2\x82", "ab\uFFFD", "incomplete utf-8 byte sequence from index 2"},
		{"ok\xed\xa0\x80", "ok\uFFFD\uFFFD\uFFFD", "invalid utf-8 sequence of 1 bytes from index 2"},
		{"\xe0\x80", "\uFFFD\uFFFD", "invalid utf-8 sequence of 1 bytes from index 0"},
		{"\xe2\x82x", "\uFFFDx", "invalid utf-8 sequence of 2 bytes from index 0"},
		{"\xf0\x90\x80x", "\uFFFDx", "invalid utf-8 sequence of 3 bytes from index 0"},
		{"\xf0\x90", "\uFFFD", "incomplete utf-8 byte sequence from index 0"},
		{"bad\xffname", "bad\uFFFDname", "invalid utf-8 sequence of 1 bytes from index 3"},
		{"\xf0\x90\x80", "\uFFFD", "incomplete utf-8 byte sequence from index 0"},
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD", "invalid utf-8 sequence of 1 bytes from index 0"},
		{"\xe0\x80a", "\uFFFD\uFFFDa", "invalid utf-8 sequence of 1 bytes from index 0"},
		{"\xc3", "\uFFFD", "incomplete utf-8 byte sequence from index 0"},
	} {
		if got := rustutf8.Lossy(tt.in); got != tt.lossy {
			t.Errorf("Lossy(%q) = %q, want %q", tt.in, got, tt.lossy)
		}
		got, bad := rustutf8.ErrorText([]byte(tt.in))
		if got != tt.errText || bad != (tt.errText != "") {
			t.Errorf("ErrorText(%q) = %q, %v, want %q", tt.in, got, bad, tt.errText)
		}
	}
}

// FuzzLossy: the result is valid UTF-8, a valid input comes back unchanged, and removing
// the replacement characters leaves only bytes of the input, in order.
func FuzzLossy(f *testing.F) {
	for _, s := range []string{"", "ok", "\xff", "a\xc3", "\xe2\x82x", "\xf0\x90\x80", "\xed\xa0\x80", "é中😀\xf4\x90"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := rustutf8.Lossy(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Lossy(%q) = %q is not valid UTF-8", s, got)
		}
		if utf8.ValidString(s) && got != s {
			t.Fatalf("Lossy(%q) = %q changed a valid string", s, got)
		}
		rest := s
		for _, part := range strings.Split(got, "\uFFFD") {
			i := strings.Index(rest, part)
			if i < 0 {
				t.Fatalf("Lossy(%q) = %q: %q is not in the input", s, got, part)
			}
			rest = rest[i+len(part):]
		}
	})
}

var utf8Text = regexp.MustCompile(`^(?:invalid utf-8 sequence of ([123]) bytes|incomplete utf-8 byte sequence) from index (\d+)$`)

// FuzzErrorText: the text reports an error exactly when Go finds the input invalid,
// at the first byte where Go's decoder fails, and "incomplete" only at the end.
func FuzzErrorText(f *testing.F) {
	for _, s := range []string{"", "ok", "\xff", "a\xc3", "\xe2\x82x", "\xf0\x90\x80", "\xed\xa0\x80", "é中😀\xf4\x90"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		msg, bad := rustutf8.ErrorText(b)
		if bad != !utf8.Valid(b) {
			t.Fatalf("%q: bad=%v, utf8.Valid=%v", b, bad, utf8.Valid(b))
		}
		if !bad {
			return
		}
		m := utf8Text.FindStringSubmatch(msg)
		if m == nil {
			t.Fatalf("%q: text %q", b, msg)
		}
		idx, _ := strconv.Atoi(m[2])
		first := 0
		for first < len(b) {
			r, n := utf8.DecodeRune(b[first:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			first += n
		}
		if idx != first {
			t.Fatalf("%q: index %d, Go's first invalid byte is %d", b, idx, first)
		}
		if n, _ := strconv.Atoi(m[1]); m[1] != "" && idx+n > len(b) {
			t.Fatalf("%q: %q runs past the end", b, msg)
		}
	})
}
