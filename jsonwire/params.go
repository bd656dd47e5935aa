package jsonwire

// Params decoding with serde semantics (spec/jsonrpc.md §1.5). The Go declaration of a
// params type says what the Rust one says; typedec.go and structdec.go hold the mapping.

import (
	"encoding/json"
	"reflect"
)

// Unit is the params type of methods that take none (Rust `()`): absent params, null
// and {} decode; anything else fails with "invalid type: map, expected unit" and the
// like.
type Unit struct{}

// Bytes is a byte string that travels as standard padded base64 (spec/jsonrpc.md §1.5).
// Decoding rejects what the reference rejects, with its error text (see DecodeBase64).
type Bytes []byte

// MarshalJSON encodes b as a base64 JSON string.
func (b Bytes) MarshalJSON() ([]byte, error) { return b.AppendJSON(nil), nil }

// AppendJSON appends b as a base64 JSON string.
func (b Bytes) AppendJSON(dst []byte) []byte {
	dst = append(dst, '"')
	dst = AppendBase64(dst, b)
	return append(dst, '"')
}

// UnmarshalJSON decodes a base64 JSON string with the reference's rules, for use with
// encoding/json. UnmarshalParams does not go through it.
func (b *Bytes) UnmarshalJSON(data []byte) error {
	if err := Validate(data); err != nil {
		return err
	}
	r := reader{data: data}
	return decodeBytes(&r, reflect.ValueOf(b).Elem())
}

// Enum is implemented by string types whose values form a closed set, like a Rust enum
// of unit variants. Variants lists the accepted values in declaration order; it is called
// once per type on the zero value, so it must not depend on the receiver. A value decodes
// from "variant" or {"variant": null}; others fail with serde's text, e.g.
// "unknown variant `x`, expected `follow` or `stop`".
type Enum interface {
	Variants() []string
}

// RustNamed is implemented by params struct types whose Rust name differs from the Go
// name; it appears in errors such as "invalid type: null, expected struct WalkOptions".
// It is called once per type on the zero value.
type RustNamed interface {
	RustName() string
}

var nullJSON = []byte("null")

// UnmarshalParams decodes raw params (nil = absent = null) into v, which must be a
// non-nil pointer, with serde semantics: see the type mapping in typedec.go and the
// struct rules in structdec.go. v is reset first; on error its contents are undefined.
//
// On failure it returns a *Error with CodeInvalidParams and the bare decoder text (e.g.
// "missing field `clientName`", "invalid number"), unless a json.Unmarshaler field
// returned a *Error itself, which is passed through. As in the reference, when raw is
// exactly an empty object and decoding fails, decoding is retried from null, which is
// what lets unit params accept {}.
//
// raw may come from Parse or elsewhere; it is validated first (value budget and
// duplicate keys included). Decoded json.RawMessage fields are copies; nothing retains
// raw. UnmarshalParams is safe for concurrent use.
func UnmarshalParams(raw json.RawMessage, v any) error {
	return unmarshalParams(raw, v, true, KnownString{})
}

// UnmarshalCheckedParams is UnmarshalParams for raw that is a value inside a document
// ScanRoot (jsonrpc.Parse) or Validate accepted, such as the params of a parsed message:
// it skips the validation pass, which cannot fail for such text (a value's syntax,
// value count, depth and keys are part of its document's checks), and so scans a large
// message once less (issue 28: an fs/writeBlock request is 1.4 MB). Given any other text
// its behaviour is undefined.
func UnmarshalCheckedParams(raw json.RawMessage, v any) error {
	return unmarshalParams(raw, v, false, KnownString{})
}

// UnmarshalCheckedParamsKnown is UnmarshalCheckedParams for params in which known (in
// raw's coordinates) names a checked string body (ScanRootKnown): a string value handed
// whole to a json.Unmarshaler ends at known.End without a search for its closing quote.
func UnmarshalCheckedParamsKnown(raw json.RawMessage, v any, known KnownString) error {
	return unmarshalParams(raw, v, false, known)
}

func unmarshalParams(raw json.RawMessage, v any, validate bool, known KnownString) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return Internal("jsonwire: UnmarshalParams needs a non-nil pointer, got %T", v)
	}
	if len(raw) == 0 {
		raw = nullJSON
	}
	if validate {
		if err := Validate(raw); err != nil {
			return &Error{Code: CodeInvalidParams, Message: err.Error()}
		}
	}
	dec := decoderFor(rv.Elem().Type())
	r := reader{data: raw}
	if known.Start > 0 && known.Start <= known.End && known.End < len(raw) && raw[known.Start-1] == '"' && raw[known.End] == '"' {
		r.known = known
	}
	err := dec(&r, rv.Elem())
	if err == nil {
		return nil
	}
	if isEmptyObject(raw) {
		retry := reader{data: nullJSON}
		if dec(&retry, rv.Elem()) == nil {
			return nil
		}
	}
	if e, ok := err.(*Error); ok {
		return e
	}
	return &Error{Code: CodeInvalidParams, Message: err.Error()}
}

// isEmptyObject reports whether the validated text raw is an object without members.
func isEmptyObject(raw []byte) bool {
	r := reader{data: raw}
	if r.peek() != '{' {
		return false
	}
	r.pos++
	return r.peek() == '}'
}
