package jsonwire

// serde's error wording, as the reference renders it when it decodes a typed value out
// of its parsed JSON tree (a serde_json::Value with arbitrary-precision numbers):
//
//	invalid type: <unexpected>, expected <expectation>
//	missing field `<name>`
//	unknown variant `<v>`, expected `a` or `b`
//	invalid length <n>, expected <expectation>
//	invalid number                       (a number that does not fit the integer type)
//
// <unexpected> describes the JSON value found: `null`, "boolean `true`", "number" (every
// number, integer or not), `string "<Rust Debug of the text>"`, "sequence", "map".

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// decodeError is a serde-style decode failure; its text is the bare detail.
type decodeError struct{ msg string }

func (e *decodeError) Error() string { return e.msg }

func errInvalidType(r *reader, expected string) *decodeError {
	return &decodeError{"invalid type: " + unexpected(r) + ", expected " + expected}
}

func errMissingField(name string) *decodeError {
	return &decodeError{"missing field `" + name + "`"}
}

func errInvalidLength(n int, expected string) *decodeError {
	return &decodeError{"invalid length " + strconv.Itoa(n) + ", expected " + expected}
}

var errBadNumber = &decodeError{"invalid number"}

// errUnknownVariant formats serde's unknown-variant error.
func errUnknownVariant(v string, variants []string) *decodeError {
	var b strings.Builder
	b.WriteString("unknown variant `")
	b.WriteString(v)
	b.WriteString("`, ")
	switch len(variants) {
	case 0:
		b.WriteString("there are no variants")
	case 1:
		b.WriteString("expected `" + variants[0] + "`")
	case 2:
		b.WriteString("expected `" + variants[0] + "` or `" + variants[1] + "`")
	default:
		b.WriteString("expected one of ")
		for i, name := range variants {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("`" + name + "`")
		}
	}
	return &decodeError{b.String()}
}

// Unexpected describes the JSON value raw (surrounding whitespace allowed; empty reads
// as null) the way the reference's serde names it in "invalid type: <unexpected>,
// expected …" texts: null, "boolean `true`", "number", `string "<Rust Debug of the
// text>"`, "sequence", "map". It is for hand-written decoders (sandbox/policy, PathUri)
// so that their texts cannot drift from this package's. Text that is not valid JSON is
// named by its first byte, a string then as plain "string".
func Unexpected(raw []byte) string {
	r := reader{data: raw}
	r.skipWS()
	if r.pos >= len(raw) {
		return "null"
	}
	if raw[r.pos] == '"' && Validate(raw) != nil {
		return "string"
	}
	return unexpected(&r)
}

// unexpected describes the value at the cursor without consuming it.
func unexpected(r *reader) string {
	switch c := r.peek(); c {
	case 'n':
		return "null"
	case 't':
		return "boolean `true`"
	case 'f':
		return "boolean `false`"
	case '{':
		return "map"
	case '[':
		return "sequence"
	case '"':
		save := r.pos
		s := r.str()
		r.pos = save
		return "string " + rustDebugString(s)
	default:
		return "number"
	}
}

// rustDebugString quotes s the way Rust's <str as Debug> does: \0 \t \r \n \" \\ as
// short escapes; grapheme-extending and non-printable characters as \u{hex}; the rest
// verbatim (the single quote included). Printability follows Go's unicode tables, which
// may differ from Rust's for characters assigned in newer Unicode versions.
func rustDebugString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case 0:
			b.WriteString(`\0`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case '\n':
			b.WriteString(`\n`)
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		default:
			if r == utf8.RuneError || isGraphemeExtend(r) || !unicode.IsPrint(r) && r != ' ' {
				b.WriteString(`\u{`)
				b.WriteString(strconv.FormatInt(int64(r), 16))
				b.WriteByte('}')
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// isGraphemeExtend approximates Unicode's Grapheme_Extend property (Me + Mn +
// Other_Grapheme_Extend), which Rust escapes in Debug output.
func isGraphemeExtend(r rune) bool {
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Other_Grapheme_Extend)
}

// appendSerdeString appends s as serde_json writes a string: only '"', '\\' and control
// characters are escaped (\b \t \n \f \r short, the rest as \u00xx, lower-case hex).
func appendSerdeString(dst []byte, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c >= 0x20:
			dst = append(dst, c)
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		}
	}
	return append(dst, '"')
}
