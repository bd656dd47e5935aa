package jsonwire_test

import (
	"fmt"
	"testing"

	"github.com/execlab/executor/jsonwire"
)

// TestAppendSerdeString_EveryASCIIByte: each ASCII byte, alone and between two letters,
// is written as serde_json writes it: '"' and '\\' and the C0 controls escaped (short
// forms for \b \t \n \f \r, \u00xx with lower-case hex for the rest), everything else
// (DEL included) as is.
func TestAppendSerdeString_EveryASCIIByte(t *testing.T) {
	short := map[byte]string{'"': `\"`, '\\': `\\`, '\b': `\b`, '\t': `\t`, '\n': `\n`, '\f': `\f`, '\r': `\r`}
	for c := 0; c < 0x80; c++ {
		want, ok := short[byte(c)]
		switch {
		case ok:
		case c < 0x20:
			want = fmt.Sprintf(`\u%04x`, c)
		default:
			want = string(rune(c))
		}
		if got := string(jsonwire.AppendSerdeString(nil, "a"+string(rune(c))+"b")); got != `"a`+want+`b"` {
			t.Errorf("byte %#x: got %s, want %s", c, got, `"a`+want+`b"`)
		}
	}
	if got := string(jsonwire.AppendSerdeString([]byte("x"), "é\xff")); got != "x\"é\ufffd\"" {
		t.Errorf("invalid UTF-8: got %q, want %q", got, "x\"é\ufffd\"")
	}
}
