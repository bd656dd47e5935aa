package envconfig

import (
	"os"
	"path/filepath"
	"testing"
)

// The expected texts were printed by codex 0.171.0 for the same input (environmentConfig/read).
func TestMarshal_MatchesReference(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"strings", `a = "plain"
b = "with \"dq\""
c = "both ' and \""
d = "back\\slash"
e = "new\nline"
f = "ctrl\u0001x"
g = "cr\r\nlf"
h = "del\u007f"
i = "a\"\"\"b\nc"
j = "x\u0001\ny'''z"
k = '''multi
line with '' two'''
`, `a = "plain"
b = 'with "dq"'
c = """both ' and """"
d = 'back\slash'
e = """
new
line"""
f = "ctrl\u0001x"
g = """
cr\r
lf"""
h = "del\u007F"
i = '''
a"""b
c'''
j = """
x\u0001
y'''z"""
k = """
multi
line with '' two"""
`},
		{"numbers", "a = 0x10\nb = 1_000\nc = 1e10\nd = -0.0\ne = -nan\nf = +inf\ng = 1.5e-7\nh = 123456789012345678.0\n",
			"a = 16\nb = 1000\nc = 10000000000.0\nd = -0.0\ne = nan\nf = inf\ng = 0.00000015\nh = 123456789012345680.0\n"},
		{"datetimes", "a = 1979-05-27 07:32:00z\nb = 1979-05-27T07:32:00.100+05:30\nc = 07:32:00.000\nd = 1979-05-27T07:32:00.123456789123Z\ne = 1979-05-27T07:32:00-00:00\n",
			"a = 1979-05-27T07:32:00Z\nb = 1979-05-27T07:32:00.1+05:30\nc = 07:32:00\nd = 1979-05-27T07:32:00.123456789Z\ne = 1979-05-27T07:32:00+00:00\n"},
		{"layout", "a4 = [{a = 1}, {b = 2}]\na5 = [1, {x = 1, y = {}}]\nit = {x = 1, n = {m = 1}}\ndot.ted.key = 3\n[empty]\n[t1.sub2.x]\n[[aot]]\n[aot.sub]\nz = 1\n[[aot]]\n",
			"a5 = [1, { x = 1, y = {} }]\n\n[[a4]]\na = 1\n\n[[a4]]\nb = 2\n\n[it]\nx = 1\n\n[it.n]\nm = 1\n\n[dot.ted]\nkey = 3\n\n[empty]\n\n[t1.sub2.x]\n\n[[aot]]\n\n[aot.sub]\nz = 1\n\n[[aot]]\n"},
		{"keys", "'k\"q' = 1\n\"k'q\" = 2\n\"k\\\"'q\" = 3\n\"k\\\\b\" = 4\n\"\" = 5\n\"a.b\" = 6\n\"k\\u0001\" = 7\n",
			"'k\"q' = 1\n\"k'q\" = 2\n\"k\\\"'q\" = 3\n'k\\b' = 4\n\"\" = 5\n\"a.b\" = 6\n\"k\\u0001\" = 7\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tab, err := Parse([]byte(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := Marshal(tab); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestProject_Selectors(t *testing.T) {
	tab, err := Parse([]byte("model = \"m\"\n[a]\nx = 1\ny = 2\n[a.b]\nz = 3\n[c]\nw = 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		paths [][]string
		want  string // "" = layer dropped
	}{
		{[][]string{{"model", "deeper"}}, "model = \"m\"\n"},
		{[][]string{{"a", "b"}, {"a"}}, "[a]\nx = 1\ny = 2\n\n[a.b]\nz = 3\n"},
		{[][]string{{"c"}, {"a", "y"}}, "[a]\ny = 2\n\n[c]\nw = 1\n"}, // the layer's order, not the selectors'
		{[][]string{{"nope"}}, ""},
		{[][]string{{"nope"}, {"a", "nope"}}, "[a]\n"}, // an emptied table survives, as in the reference
		{[][]string{{"a", "b", "z"}}, "[a.b]\nz = 3\n"},
	}
	for _, c := range cases {
		got := ""
		if p := Project(tab, c.paths); p != nil {
			got = Marshal(p)
		}
		if got != c.want {
			t.Errorf("Project(%q) = %q, want %q", c.paths, got, c.want)
		}
	}
}

func TestParse_RejectsInvalid(t *testing.T) {
	for _, in := range []string{"model = \n", "a = 1\na = 2\n", "[a]\n[a]\n", "a = \"x\n", "a.b = 1\n[a]\nb = 2\n"} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", in)
		}
	}
	_, err := Parse([]byte("x = 1\nmodel = gpt\n"))
	pe, ok := err.(*ParseError)
	if !ok || pe.Line != 2 || pe.Column != 9 || pe.Msg != "string values must be quoted, expected literal string" {
		t.Errorf("got %#v, want line 2 column 9 and the reference's message", err)
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The reference's texts and positions for the same documents (codex 0.171.0).
func TestParse_ErrorsInReferenceWords(t *testing.T) {
	cases := []struct{ in, want string }{
		{"a = \"x\n", "1:7: invalid basic string, expected `\"`"},
		{"a 1\n", "1:3: key with no value, expected `=`"},
		{"[a\n", "1:3: unclosed table, expected `]`"},
		{"[[a]]\n[a]\n", "2:2: duplicate key"},
		{"= 1\n", "1:1: unquoted keys cannot be empty, expected letters, numbers, `-`, `_`"},
		{"ü = 1\n", "1:1: invalid unquoted key, expected letters, numbers, `-`, `_`"},
		{"a = [1\n", "1:7: unclosed array, expected `]`"},
		{"a = {b = 1\n", "1:11: unclosed inline table, expected `}`"},
		{"a = tru\n", "1:5: invalid boolean, expected `true`"},
		{"a = 01\n", "1:5: unexpected leading zero, expected nothing"},
		{"a = 1.\n", "1:7: invalid fraction, expected digits"},
		{"a = 1\n[a]\n", "2:2: duplicate key"},
		{"a = 25:00:00\n", "1:5: invalid time, expected hour between 00 and 23"},
		{"big = 99999999999999999999\n", "1:7: invalid type: integer `99999999999999999999` as i128, expected any valid TOML value"},
		{"big = 9_999_999_999_999_999_999\n", "1:7: u64 value was too large"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.in))
		if err == nil || err.Error() != c.want {
			t.Errorf("Parse(%q) = %v, want %s", c.in, err, c.want)
		}
	}
}

func TestMarshal_TimeWithoutSeconds(t *testing.T) {
	tab, err := Parse([]byte("t = 07:32\nd = 1979-05-27 07:32Z\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Marshal(tab), "t = 07:32:00\nd = 1979-05-27T07:32:00Z\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
