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

// serdeShortEscapes maps each byte serde_json escapes with a short form ('"', '\\' and
// the controls \b \t \n \f \r) to the letter after the backslash; the other C0 controls
// (0: none) are written as \u00xx.
var serdeShortEscapes = [0x60]byte{'"': '"', '\\': '\\', '\b': 'b', '\t': 't', '\n': 'n', '\f': 'f', '\r': 'r'}

// AppendSerdeString appends s to b as serde_json writes a string: only '"', '\\' and C0
// controls are escaped (short forms for \b \t \n \f \r, the rest as \u00xx with
// lower-case hex); invalid UTF-8 becomes U+FFFD, as a Rust String cannot hold it. It is
// the one string encoder of the hand-written JSON encoders and of RequestID's re-escape.
func AppendSerdeString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, s[start:i]...)
				b = append(b, "\ufffd"...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		if e := serdeShortEscapes[c]; e != 0 {
			b = append(b, '\\', e)
		} else {
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
