package envconfig

// String and key quoting, as toml_writer (the reference's TOML writer) chooses it.
//
// Values, first that applies: basic "…" when nothing needs escaping (no control
// character but tab, no backslash, no double quote, no newline); literal '…' when there
// is no control character, single quote or newline; multi-line basic """…""" when
// there is no control character but tab and newline, no backslash and at most two
// double quotes in a row; multi-line literal '''…''' when there is no such control
// character and at most two single quotes in a row; else multi-line basic with escapes
// when the string has a newline, basic with escapes otherwise. A multi-line form of a
// string with a newline starts with a newline after the delimiter.
//
// Keys: bare when non-empty and only A-Z a-z 0-9 - _; else basic when nothing needs
// escaping; else literal when there is no control character and no single quote; else
// basic with escapes.
//
// Escapes in basic strings: \b \t \n (single-line only) \f \r \" (a double quote in a
// single-line string, or the third in a row in a multi-line one) \\, and \uXXXX with
// upper-case hex for the other control characters and DEL.

import (
	"strings"
)

type strMetrics struct {
	maxSingles, maxDoubles int
	escapeCodes            bool // a control character other than tab and newline, or DEL
	escape                 bool // a backslash
	newline                bool
}

func measure(s string) strMetrics {
	var m strMetrics
	singles, doubles := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\'' {
			singles++
			m.maxSingles = max(m.maxSingles, singles)
		} else {
			singles = 0
		}
		if c == '"' {
			doubles++
			m.maxDoubles = max(m.maxDoubles, doubles)
		} else {
			doubles = 0
		}
		switch {
		case c == '\\':
			m.escape = true
		case c == '\t':
		case c == '\n':
			m.newline = true
		case c <= 0x1f || c == 0x7f:
			m.escapeCodes = true
		}
	}
	return m
}

type encoding uint8

const (
	encLiteral encoding = iota
	encBasic
	encMLLiteral
	encMLBasic
	encBare
)

func valueEncoding(s string) encoding {
	m := measure(s)
	switch {
	case !m.escapeCodes && !m.escape && m.maxDoubles == 0 && !m.newline:
		return encBasic
	case !m.escapeCodes && m.maxSingles == 0 && !m.newline:
		return encLiteral
	case !m.escapeCodes && !m.escape && m.maxDoubles <= 2:
		return encMLBasic
	case !m.escapeCodes && m.maxSingles <= 2:
		return encMLLiteral
	case m.newline:
		return encMLBasic
	}
	return encBasic
}

func keyEncoding(s string) encoding {
	bare := s != ""
	var single, double, codes, esc bool
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			bare = false
		}
		switch {
		case c == '\'':
			single = true
		case c == '"':
			double = true
		case c == '\\':
			esc = true
		case c == '\t':
		case c <= 0x1f || c == 0x7f:
			codes = true
		}
	}
	switch {
	case bare:
		return encBare
	case !codes && !esc && !double:
		return encBasic
	case !codes && !single:
		return encLiteral
	}
	return encBasic
}

func writeString(b *strings.Builder, s string) {
	enc := valueEncoding(s)
	writeEncoded(b, s, enc, measure(s).newline)
}

func writeKey(b *strings.Builder, k string) {
	writeEncoded(b, k, keyEncoding(k), false)
}

const hexUpper = "0123456789ABCDEF"

func writeEncoded(b *strings.Builder, s string, enc encoding, newline bool) {
	var delim string
	switch enc {
	case encBare:
		b.WriteString(s)
		return
	case encLiteral:
		delim = "'"
	case encBasic:
		delim = `"`
	case encMLLiteral:
		delim = "'''"
	case encMLBasic:
		delim = `"""`
	}
	ml := enc == encMLLiteral || enc == encMLBasic
	b.WriteString(delim)
	if newline && ml {
		b.WriteByte('\n')
	}
	if enc == encLiteral || enc == encMLLiteral {
		b.WriteString(s)
		b.WriteString(delim)
		return
	}
	maxDoubles := 0
	if ml {
		maxDoubles = 2
	}
	doubles := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			doubles++
			if doubles > maxDoubles {
				b.WriteString(`\"`)
				doubles = 0
				continue
			}
		} else {
			doubles = 0
		}
		switch {
		case c == 0x8:
			b.WriteString(`\b`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			if ml {
				b.WriteByte('\n')
			} else {
				b.WriteString(`\n`)
			}
		case c == 0xc:
			b.WriteString(`\f`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\\':
			b.WriteString(`\\`)
		case c <= 0x1f || c == 0x7f:
			b.WriteString(`\u00`)
			b.WriteByte(hexUpper[c>>4])
			b.WriteByte(hexUpper[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString(delim)
}
