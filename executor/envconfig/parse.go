package envconfig

// Parsing: github.com/pelletier/go-toml/v2 validates the document (syntax, duplicate
// keys, table redefinition; its DecodeError carries the line and column), then its
// unstable AST parser, which keeps document order, is walked to build the ordered
// Table. Scalars are converted here (numbers.go, datetime.go) from the raw text, so no
// value passes through a Go map or time.Time on the way.

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// ParseError is a TOML syntax or structure error with its 1-based position.
type ParseError struct {
	Line, Column int
	Msg          string // the reference's message where known (referenceMessage), else the library's
	lineText     string // the offending line, for the reference's snippet form
	span         int    // carets under the error in the snippet (≥ 1)
}

func (e *ParseError) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Column, e.Msg) }

// Parse parses a TOML document into an ordered table.
func Parse(data []byte) (*Table, error) {
	var probe any
	if err := toml.Unmarshal(data, &probe); err != nil {
		return nil, toParseError(data, err)
	}
	root := NewTable()
	b := builder{root: root, cur: root}
	var p unstable.Parser
	p.Reset(data)
	for p.NextExpression() {
		if err := b.expression(p.Expression()); err != nil {
			return nil, &ParseError{Line: 1, Column: 1, Msg: err.Error()}
		}
	}
	if err := p.Error(); err != nil {
		return nil, toParseError(data, err)
	}
	return root, nil
}

func toParseError(data []byte, err error) error {
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		line := lineAt(data, row)
		msg := referenceMessage(de.Error())
		if strings.HasSuffix(msg, "too large to fit in a 64-bit signed integer") {
			// PROBED: "invalid type: integer `99999999999999999999` as i128, expected any
			// valid TOML value" at the number's position.
			// A positive number that fits in a u64 reads "u64 value was too large".
			n := numberAt(line, col)
			if _, err := strconv.ParseUint(n, 10, 64); err == nil {
				msg = "u64 value was too large"
			} else {
				msg = "invalid type: integer `" + n + "` as i128, expected any valid TOML value"
			}
		}
		return &ParseError{Line: row, Column: col, Msg: msg, lineText: line, span: spanOf(msg, line, col)}
	}
	return &ParseError{Line: 1, Column: 1, Msg: err.Error(), lineText: lineAt(data, 1)}
}

func lineAt(data []byte, row int) string {
	lines := strings.Split(string(data), "\n")
	if row < 1 || row > len(lines) {
		return ""
	}
	return strings.TrimSuffix(lines[row-1], "\r")
}

type builder struct {
	root, cur *Table
}

func keyParts(it unstable.Iterator) []string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}

func (b *builder) expression(n *unstable.Node) error {
	switch n.Kind {
	case unstable.KeyValue:
		return b.keyValue(b.cur, n)
	case unstable.Table, unstable.ArrayTable:
		t, err := b.descend(keyParts(n.Key()), n.Kind == unstable.ArrayTable)
		if err != nil {
			return err
		}
		b.cur = t
	}
	return nil
}

// descend resolves a [header] or [[header]] from the root.
func (b *builder) descend(parts []string, aot bool) (*Table, error) {
	t := b.root
	for i, k := range parts {
		last := i == len(parts)-1
		v := t.Get(k)
		switch {
		case v == nil:
			nt := NewTable()
			if last && aot {
				nt.fromAOT = true
				t.Set(k, &Value{Kind: Array, Arr: []*Value{tableValue(nt)}})
				return nt, nil
			}
			if last {
				nt.header = true
			}
			t.Set(k, tableValue(nt))
			t = nt
		case last && aot:
			if !isParsedAOT(v) {
				return nil, fmt.Errorf("key %q redefined as an array of tables", k)
			}
			nt := NewTable()
			nt.fromAOT = true
			v.Arr = append(v.Arr, tableValue(nt))
			return nt, nil
		case v.Kind == TableKind:
			if v.Tab.inline || (last && (v.Tab.header || v.Tab.dotted)) {
				return nil, fmt.Errorf("table %q redefined", k)
			}
			if last {
				v.Tab.header = true
			}
			t = v.Tab
		case !last && isParsedAOT(v):
			t = v.Arr[len(v.Arr)-1].Tab
		default:
			return nil, fmt.Errorf("key %q is not a table", k)
		}
	}
	return t, nil
}

// keyValue adds a `k.e.y = value` line (or inline-table member) to t.
func (b *builder) keyValue(t *Table, n *unstable.Node) error {
	parts := keyParts(n.Key())
	for _, k := range parts[:len(parts)-1] {
		v := t.Get(k)
		switch {
		case v == nil:
			nt := NewTable()
			nt.dotted = true
			t.Set(k, tableValue(nt))
			t = nt
		case v.Kind == TableKind && !v.Tab.inline && !v.Tab.header:
			t = v.Tab
		default:
			return fmt.Errorf("dotted key %q extends a defined value", k)
		}
	}
	k := parts[len(parts)-1]
	if t.Get(k) != nil {
		return fmt.Errorf("duplicate key %q", k)
	}
	v, err := b.value(n.Value())
	if err != nil {
		return err
	}
	t.Set(k, v)
	return nil
}

func (b *builder) value(n *unstable.Node) (*Value, error) {
	switch n.Kind {
	case unstable.String:
		return &Value{Kind: String, Str: string(n.Data)}, nil
	case unstable.Bool:
		return &Value{Kind: Boolean, Bool: string(n.Data) == "true"}, nil
	case unstable.Integer:
		i, err := parseInteger(string(n.Data))
		if err != nil {
			return nil, err
		}
		return &Value{Kind: Integer, Int: i}, nil
	case unstable.Float:
		f, err := parseFloat(string(n.Data))
		if err != nil {
			return nil, err
		}
		return &Value{Kind: Float, Num: f}, nil
	case unstable.LocalDate, unstable.LocalTime, unstable.LocalDateTime, unstable.DateTime:
		s, err := canonicalDatetime(string(n.Data))
		if err != nil {
			return nil, err
		}
		return &Value{Kind: Datetime, Str: s}, nil
	case unstable.Array:
		v := &Value{Kind: Array, Arr: []*Value{}}
		it := n.Children()
		for it.Next() {
			e, err := b.value(it.Node())
			if err != nil {
				return nil, err
			}
			v.Arr = append(v.Arr, e)
		}
		return v, nil
	case unstable.InlineTable:
		t := NewTable()
		it := n.Children()
		for it.Next() {
			if err := b.keyValue(t, it.Node()); err != nil {
				return nil, err
			}
		}
		markInline(t)
		return tableValue(t), nil
	}
	return nil, fmt.Errorf("unexpected TOML node %s", n.Kind)
}

// markInline closes t and the tables its dotted keys created.
func markInline(t *Table) {
	t.inline = true
	for _, k := range t.keys {
		if v := t.vals[k]; v.Kind == TableKind && v.Tab.dotted {
			markInline(v.Tab)
		}
	}
}

func parseInteger(raw string) (int64, error) {
	i, err := strconv.ParseInt(raw, 0, 64)
	if err != nil {
		i, err = strconv.ParseInt(strings.ReplaceAll(raw, "_", ""), 0, 64)
	}
	if err != nil {
		return 0, fmt.Errorf("integer %q: %w", raw, err)
	}
	return i, nil
}

func parseFloat(raw string) (float64, error) {
	s := strings.ReplaceAll(raw, "_", "")
	switch s {
	case "nan", "+nan", "-nan":
		return math.NaN(), nil
	case "inf", "+inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return f, nil // ±Inf or 0, as Rust's parser rounds
		}
		return 0, fmt.Errorf("float %q: %w", raw, err)
	}
	return f, nil
}

// isParsedAOT reports whether v was created by [[header]]s.
func isParsedAOT(v *Value) bool {
	return v.Kind == Array && len(v.Arr) > 0 && v.Arr[0].Kind == TableKind && v.Arr[0].Tab.fromAOT
}

// referenceMessage rewords the library's messages whose counterpart in the reference's
// toml crate is known and reported at the same position (PROBED on 0.171.0, one probe
// each); others keep the library's text (doc.go, limits).
func referenceMessage(msg string) string {
	msg = strings.TrimPrefix(msg, "toml: ")
	for _, m := range messageTable {
		if strings.HasPrefix(msg, m.prefix) && strings.HasSuffix(msg, m.suffix) && len(msg) >= len(m.prefix)+len(m.suffix) {
			return m.reference
		}
	}
	return msg
}

// messageTable maps go-toml messages (prefix + suffix) to the toml crate's.
var messageTable = []struct{ prefix, suffix, reference string }{
	{"unexpected character", "at start of value", "string values must be quoted, expected literal string"},
	{"key ", " is already defined", "duplicate key"},
	{"table ", " already exists as an array of tables", "duplicate key"},
	{"table ", " already exists", "duplicate key"},
	{"key ", " should be a table, not a value", "duplicate key"},
	{"basic strings cannot have new lines", "", "invalid basic string, expected `\"`"},
	{"literal strings cannot have new lines", "", "invalid literal string, expected `'`"},
	{"expected '=' after key", "", "key with no value, expected `=`"},
	{"expected ']' to close table name", "", "unclosed table, expected `]`"},
	{"invalid character at start of key: U+003D", "", "unquoted keys cannot be empty, expected letters, numbers, `-`, `_`"},
	{"invalid character at start of key", "", "invalid unquoted key, expected letters, numbers, `-`, `_`"},
	{"array is incomplete", "", "unclosed array, expected `]`"},
	{"inline table is incomplete", "", "unclosed inline table, expected `}`"},
	{`expected keyword "true"`, "", "invalid boolean, expected `true`"},
	{`expected keyword "false"`, "", "invalid boolean, expected `false`"},
	{"integers cannot have leading zeroes", "", "unexpected leading zero, expected nothing"},
	{"decimal point must be followed by a digit", "", "invalid fraction, expected digits"},
	{"hour cannot be greater", "", "invalid time, expected hour between 00 and 23"},
	// From the differential run over the fuzz corpus (doc.go), same positions:
	{`multiline basic string not terminated by """`, "", "invalid multi-line basic string, expected `\"`"},
	{"multiline literal string not terminated by '''", "", "invalid multi-line literal string, expected `'`"},
	{`expected "inf"`, "", "invalid float, expected `inf`"},
	{`expected keyword "inf"`, "", "invalid float, expected `inf`"},
	{`expected "nan"`, "", "invalid float, expected `nan`"},
	{`expected keyword "nan"`, "", "invalid float, expected `nan`"},
	{"unable to parse float:", "value out of range", "floating-point number overflowed"},
	{"control characters are not allowed in comments", "", "invalid comment character, expected printable characters"},
	{"key ", " but should be an array table", "duplicate key"},
	{"exponent must contain at least one digit", "", "invalid exponent, expected digits"},
	{"unexpected comma in inline table", "", "extra comma in inline table, expected key"},
	{"expected ',' or '}' after inline table key-value", "", "missing comma between key-value pairs, expected `,`"},
	{"number must have at least one digit between underscores", "", "`_` may only go between digits, expected nothing"},
	{"expected newline but got", "", "unexpected key or value, expected newline, `#`"},
}

// tokenSpanMessages are the errors the reference underlines over the whole value token
// rather than one character (PROBED: "tru", "25:00:00", "gpt", a 20-digit integer).
var tokenSpanMessages = []string{
	"string values must be quoted",
	"invalid boolean",
	"invalid time",
	"invalid type: integer",
	"u64 value was too large",
}

// spanOf is the number of carets the reference draws for msg at col of line.
func spanOf(msg, line string, col int) int {
	for _, m := range tokenSpanMessages {
		if strings.HasPrefix(msg, m) && col >= 1 && col <= len(line) {
			end := col - 1
			for end < len(line) && strings.IndexByte(" \t\r,]}#", line[end]) < 0 {
				end++
			}
			return max(end-(col-1), 1)
		}
	}
	return 1
}

// numberAt returns the decimal integer starting at 1-based column col of line, without
// underscores or a plus sign.
func numberAt(line string, col int) string {
	if col < 1 || col > len(line) {
		return ""
	}
	end := col - 1
	for end < len(line) && strings.IndexByte("+-0123456789_", line[end]) >= 0 {
		end++
	}
	return strings.TrimPrefix(strings.ReplaceAll(line[col-1:end], "_", ""), "+")
}
