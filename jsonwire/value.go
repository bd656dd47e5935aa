package jsonwire

// Single-value decoding for a caller that walks its own envelope (executor/jsonrpc's
// Parse): the pieces of the reference's JSONRPCMessage decoding that are serde's rather
// than JSON-RPC's.

import (
	"reflect"
)

// errNoVariant is serde's text for a value that matches no variant of the reference's
// untagged RequestId enum (i64 | String).
var errNoVariant = &decodeError{"data did not match any variant of untagged enum RequestId"}

// Decode decodes the single JSON value raw into v, which must be a non-nil pointer,
// with the serde semantics of UnmarshalParams, but returns the bare serde text (e.g.
// "missing field `code`") as a plain error, not an *Error, and does not retry an empty
// object as null. raw is validated first. Decode is safe for concurrent use and does
// not retain raw except through json.RawMessage fields, which are copies.
func Decode(raw []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &decodeError{"jsonwire: Decode needs a non-nil pointer"}
	}
	if err := Validate(raw); err != nil {
		return err
	}
	r := reader{data: raw}
	return decoderFor(rv.Elem().Type())(&r, rv.Elem())
}

// String decodes raw, one JSON value taken from a text that passed Validate or
// ScanRoot, as serde decodes a Rust String: a JSON string is unescaped; any other value
// fails with "invalid type: <value>, expected a string".
func String(raw []byte) (string, error) {
	r := reader{data: raw}
	if r.peek() != '"' {
		return "", errInvalidType(&r, "a string")
	}
	return r.str(), nil
}

// MissingField is serde's error for an absent required struct field: "missing field
// `name`".
func MissingField(name string) error { return errMissingField(name) }

// Bounds of the integers that the reference reports as "integer `N` as u128/i128"
// rather than as a plain variant mismatch: magnitudes beyond u64/i64 up to these.
const (
	u128Max    = "340282366920938463463374607431768211455"
	i128MinAbs = "170141183460469231731687303715884105728"
)

// RequestID decodes raw, one JSON value taken from a text that passed Validate or
// ScanRoot, as the reference's untagged RequestId enum (i64 | String), and returns the
// JSON text the reference echoes for it: integers in canonical decimal ("-0" becomes
// "0"), strings re-escaped the way serde_json writes them (only '"', '\\' and control
// characters escaped). The result aliases raw when raw is already canonical.
func RequestID(raw []byte) ([]byte, error) {
	if len(raw) == 0 {
		return nil, errNoVariant
	}
	switch c := raw[0]; {
	case c == '"':
		inner := raw[1 : len(raw)-1]
		for _, b := range inner {
			if b == '\\' {
				return AppendSerdeString(nil, string(appendUnescaped(nil, inner))), nil
			}
		}
		return raw, nil
	case c == '-' || isDigit(c):
		return integerID(raw, c == '-')
	default:
		return nil, errNoVariant
	}
}

// integerID is RequestID for a number.
func integerID(raw []byte, neg bool) ([]byte, error) {
	digits := raw
	if neg {
		digits = raw[1:]
	}
	for _, b := range digits {
		if !isDigit(b) {
			return nil, errNoVariant // fractions and exponents, 1.0 and 1e2 included
		}
	}
	if fitsInt64(digits, neg) {
		if neg && len(digits) == 1 && digits[0] == '0' {
			return []byte("0"), nil
		}
		return raw, nil
	}
	if !neg && len(digits) <= 20 && (len(digits) < 20 || string(digits) <= "18446744073709551615") {
		return nil, errNoVariant // a u64 that is not an i64
	}
	limit, as := u128Max, "u128"
	if neg {
		limit, as = i128MinAbs, "i128"
	}
	if len(digits) < len(limit) || len(digits) == len(limit) && string(digits) <= limit {
		return nil, &decodeError{"invalid type: integer `" + string(raw) + "` as " + as + ", expected any value"}
	}
	return nil, errNoVariant
}

// fitsInt64 reports whether the decimal digits (no leading zeros, sign separate) are
// within i64.
func fitsInt64(digits []byte, neg bool) bool {
	const maxAbs, minAbs = "9223372036854775807", "9223372036854775808"
	limit := maxAbs
	if neg {
		limit = minAbs
	}
	return len(digits) < len(limit) || len(digits) == len(limit) && string(digits) <= limit
}
