package envconfig

// Serialization as the reference prints a toml::Value table with toml::to_string
// (toml 0.9 / toml_writer; PROBED on 0.171.0, see doc.go for the cases):
//
//	model = "gpt"              key/value pairs of a table first, in key order,
//	args = ["a", 1]            arrays inline with ", " between elements,
//	env = { A = "1" }          tables inside arrays inline: "{ k = v, k2 = v2 }", "{}"
//	                           a blank line before every header
//	[mcp_servers.foo]          then each sub-table in key order, depth first; a table
//	url = "http://x"           with no key/value pairs of its own but with sub-tables
//	                           prints no header ([a] is implicit above [a.b])
//	[[servers]]                arrays whose elements are all tables (and at least one)
//	name = "one"               become arrays of tables; every element prints its header
//
// Strings and keys choose their quoting as toml_writer's TomlStringBuilder and
// TomlKeyBuilder do (strings.go). Floats print Rust's shortest round-trip decimal
// without exponent, ".0" when integral, "inf", "-inf", "nan" (the sign of NaN is
// dropped). Integers print in decimal.

import (
	"math"
	"strconv"
	"strings"
)

// Marshal renders t as the reference's toml::to_string does.
func Marshal(t *Table) string {
	var e encoder
	e.table(nil, t, false)
	return e.b.String()
}

type encoder struct {
	b strings.Builder
}

// isAOT reports whether v prints as an array of tables.
func isAOT(v *Value) bool {
	if v.Kind != Array || len(v.Arr) == 0 {
		return false
	}
	for _, e := range v.Arr {
		if e.Kind != TableKind {
			return false
		}
	}
	return true
}

func isSection(v *Value) bool { return v.Kind == TableKind || isAOT(v) }

func (e *encoder) header(path []string, aot bool) {
	if e.b.Len() > 0 {
		e.b.WriteByte('\n')
	}
	if aot {
		e.b.WriteString("[[")
	} else {
		e.b.WriteByte('[')
	}
	for i, k := range path {
		if i > 0 {
			e.b.WriteByte('.')
		}
		writeKey(&e.b, k)
	}
	if aot {
		e.b.WriteString("]]\n")
	} else {
		e.b.WriteString("]\n")
	}
}

// table writes t at path: its header (unless root, or implicit), its pairs, then its
// sections. aotElem: t is an element of an array of tables, whose header always prints.
func (e *encoder) table(path []string, t *Table, aotElem bool) {
	pairs := false
	for _, k := range t.keys {
		if !isSection(t.vals[k]) {
			pairs = true
			break
		}
	}
	switch {
	case aotElem:
		e.header(path, true)
	case len(path) > 0 && (pairs || len(t.keys) == 0):
		e.header(path, false)
	}
	for _, k := range t.keys {
		v := t.vals[k]
		if isSection(v) {
			continue
		}
		writeKey(&e.b, k)
		e.b.WriteString(" = ")
		writeInline(&e.b, v)
		e.b.WriteByte('\n')
	}
	for _, k := range t.keys {
		v := t.vals[k]
		if !isSection(v) {
			continue
		}
		sub := append(path[:len(path):len(path)], k)
		if v.Kind == TableKind {
			e.table(sub, v.Tab, false)
			continue
		}
		for _, el := range v.Arr {
			e.table(sub, el.Tab, true)
		}
	}
}

// writeInline writes v in value position.
func writeInline(b *strings.Builder, v *Value) {
	switch v.Kind {
	case String:
		writeString(b, v.Str)
	case Integer:
		b.WriteString(strconv.FormatInt(v.Int, 10))
	case Float:
		b.WriteString(formatFloat(v.Num))
	case Boolean:
		b.WriteString(strconv.FormatBool(v.Bool))
	case Datetime:
		b.WriteString(v.Str)
	case Array:
		b.WriteByte('[')
		for i, el := range v.Arr {
			if i > 0 {
				b.WriteString(", ")
			}
			writeInline(b, el)
		}
		b.WriteByte(']')
	case TableKind:
		if v.Tab.Len() == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{ ")
		for i, k := range v.Tab.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeKey(b, k)
			b.WriteString(" = ")
			writeInline(b, v.Tab.vals[k])
		}
		b.WriteString(" }")
	}
}

// formatFloat prints f as Rust's Display for f64 does, with toml's ".0" for integral
// values and its spellings of the non-finite values.
func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}
