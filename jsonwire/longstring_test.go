package jsonwire_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/execlab/executor/jsonwire"
)

// longStringOutcome is everything the scanner and the decoder report for data: the
// Validate and ScanRoot errors, the captured members, and what UnmarshalParams makes of
// it. The fast string paths must not change any of it.
func longStringOutcome(data []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "validate=%v;", jsonwire.Validate(data))
	root, err := jsonwire.ScanRoot(data, []string{"id", "params"}, nil)
	fmt.Fprintf(&b, "root=%+v,%v;", root, err)
	var k kitchen
	fmt.Fprintf(&b, "params=%v,%+v", jsonwire.UnmarshalParams(data, &k), k)
	return b.String()
}

// FuzzLongStrings compares the scanner and decoder with their long-string fast paths on
// and off: same errors (text and position), same members, same values.
func FuzzLongStrings(f *testing.F) {
	long := strings.Repeat("QUJD", 40)
	for _, s := range []string{
		`{"name":"` + long + `","blob":"` + long + `"}`,
		`{"name":"` + long + `\n` + long + `"}`,
		`{"name":"` + long + "\x01" + long + `"}`,
		`{"name":"` + long + "é\xff" + long + `"}`,
		`{"name":"` + long + `\"` + long + `","id":1}`,
		`{"name":"` + long + `\u12` + long + `"}`,
		`{"name":"` + long,
		`{"name":"` + long + "\x7f" + long + `","raw":["` + long + `"]}`,
		`{"id":"` + long + `","params":{"name":"` + long + `"}}`,
		`{"raw":["` + long + `\\"],"name":"x"}`,
		`{"raw":["` + long + `\\\"` + long + `\\\\"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast := longStringOutcome(data)
		jsonwire.SetSlowStringsForTest(true)
		slow := longStringOutcome(data)
		jsonwire.SetSlowStringsForTest(false)
		if fast != slow {
			t.Fatalf("input %q:\nfast: %s\nslow: %s", data, fast, slow)
		}
	})
}
