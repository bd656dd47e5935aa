package jsonwire

// Reflection-driven decoders with serde semantics, compiled once per Go type.
//
// Mapping from Go to the Rust types whose behaviour it reproduces:
//
//	bool                         bool            "a boolean"
//	string                       String          "a string"
//	int, int64 / int32 / …       i64 / i32 / …   "i64", "i32", …; non-integers and
//	uint64 / uint / uint32 / …   u64 / usize / … "u64", "usize", …  out-of-range → "invalid number"
//	float64 / float32            f64 / f32
//	[]T                          Vec<T>          "a sequence"
//	map[string]T                 HashMap<String,T> "a map"
//	*T                           Option<T>       absent or null → nil
//	struct                       #[derive(Deserialize)] struct, camelCase names from json tags
//	string type with Variants()  enum of unit variants (externally tagged)
//	json.Unmarshaler             custom Deserialize; its error text is the detail
//	json.RawMessage              serde_json::Value, kept as raw text
//	Bytes                        base64 byte string
//	Unit                         ()
//	any                          serde_json::Value via encoding/json

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"sync"
)

type decodeFunc func(r *reader, v reflect.Value) error

var (
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	bytesType       = reflect.TypeFor[Bytes]()
	unitType        = reflect.TypeFor[Unit]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	enumType        = reflect.TypeFor[Enum]()
	rustNamedType   = reflect.TypeFor[RustNamed]()
)

// decoderCache maps reflect.Type to decodeFunc. Entries are immutable once stored.
var decoderCache sync.Map

func decoderFor(t reflect.Type) decodeFunc {
	if d, ok := decoderCache.Load(t); ok {
		return d.(decodeFunc)
	}
	c := compiler{pending: map[reflect.Type]*decodeFunc{}}
	d := c.compile(t)
	actual, _ := decoderCache.LoadOrStore(t, d)
	return actual.(decodeFunc)
}

// compiler builds the decoders of one type graph; pending breaks cycles.
type compiler struct {
	pending map[reflect.Type]*decodeFunc
}

func (c *compiler) compile(t reflect.Type) decodeFunc {
	if d, ok := decoderCache.Load(t); ok {
		return d.(decodeFunc)
	}
	if p, ok := c.pending[t]; ok {
		return func(r *reader, v reflect.Value) error { return (*p)(r, v) }
	}
	slot := new(decodeFunc)
	c.pending[t] = slot
	*slot = c.build(t)
	return *slot
}

func (c *compiler) build(t reflect.Type) decodeFunc {
	switch {
	case t == rawMessageType:
		return decodeRaw
	case t == bytesType:
		return decodeBytes
	case t == unitType:
		return decodeUnit
	case t.Kind() == reflect.Pointer:
		return c.optionDecoder(t)
	case reflect.PointerTo(t).Implements(unmarshalerType):
		return unmarshalerDecoder(t)
	case t.Kind() == reflect.String && (t.Implements(enumType) || reflect.PointerTo(t).Implements(enumType)):
		return enumDecoder(t)
	}
	switch t.Kind() {
	case reflect.Bool:
		return decodeBool
	case reflect.String:
		return decodeString
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intDecoder(t)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintDecoder(t)
	case reflect.Float32, reflect.Float64:
		return floatDecoder(t)
	case reflect.Slice:
		return c.sliceDecoder(t)
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			return c.mapDecoder(t)
		}
	case reflect.Struct:
		return c.structDecoder(t)
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return decodeAny
		}
	}
	return func(*reader, reflect.Value) error {
		return fmt.Errorf("jsonwire: cannot decode params into %v", t)
	}
}

func decodeRaw(r *reader, v reflect.Value) error {
	v.SetBytes(bytes.Clone(r.skip()))
	return nil
}

func decodeBytes(r *reader, v reflect.Value) error {
	if r.peek() != '"' {
		return errInvalidType(r, "a string")
	}
	raw, escaped := r.stringRaw()
	if escaped {
		raw = appendUnescaped(nil, raw)
	}
	out, err := decodeBase64(raw)
	if err != nil {
		return &decodeError{err.Error()}
	}
	v.SetBytes(out)
	return nil
}

func decodeUnit(r *reader, v reflect.Value) error {
	if r.isNull() {
		return nil
	}
	return errInvalidType(r, "unit")
}

func (c *compiler) optionDecoder(t reflect.Type) decodeFunc {
	elem := c.compile(t.Elem())
	return func(r *reader, v reflect.Value) error {
		if r.isNull() {
			v.SetZero()
			return nil
		}
		nv := reflect.New(t.Elem())
		if err := elem(r, nv.Elem()); err != nil {
			return err
		}
		v.Set(nv)
		return nil
	}
}

// unmarshalerDecoder hands the raw value (null included) to the type's UnmarshalJSON.
// A *Error it returns is passed through with its code; any other error's text becomes
// the -32602 detail verbatim.
func unmarshalerDecoder(t reflect.Type) decodeFunc {
	return func(r *reader, v reflect.Value) error {
		raw := r.skip()
		nv := reflect.New(t)
		if err := nv.Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			if e, ok := err.(*Error); ok {
				return e
			}
			return &decodeError{err.Error()}
		}
		v.Set(nv.Elem())
		return nil
	}
}

// enumDecoder reproduces serde_json's externally tagged enum of unit variants: a string
// naming a variant, or a one-entry map {"variant": null}.
func enumDecoder(t reflect.Type) decodeFunc {
	var variants []string
	if t.Implements(enumType) {
		variants = reflect.Zero(t).Interface().(Enum).Variants()
	} else {
		variants = reflect.New(t).Interface().(Enum).Variants()
	}
	lookup := func(name string) bool {
		for _, v := range variants {
			if v == name {
				return true
			}
		}
		return false
	}
	return func(r *reader, v reflect.Value) error {
		switch r.peek() {
		case '"':
			name := r.str()
			if !lookup(name) {
				return errUnknownVariant(name, variants)
			}
			v.SetString(name)
			return nil
		case '{':
			r.pos++
			key, escaped, ok := r.objectNext()
			if !ok {
				return &decodeError{"invalid value: map, expected map with a single key"}
			}
			valuePos := r.pos
			r.skip()
			if _, _, more := r.objectNext(); more {
				return &decodeError{"invalid value: map, expected map with a single key"}
			}
			end := r.pos
			name := string(key)
			if escaped {
				name = string(appendUnescaped(nil, key))
			}
			if !lookup(name) {
				return errUnknownVariant(name, variants)
			}
			r.pos = valuePos
			if !r.isNull() {
				return errInvalidType(r, "unit")
			}
			r.pos = end
			v.SetString(name)
			return nil
		default:
			return errInvalidType(r, "string or map")
		}
	}
}

func decodeBool(r *reader, v reflect.Value) error {
	switch r.peek() {
	case 't':
		r.pos += len("true")
		v.SetBool(true)
	case 'f':
		r.pos += len("false")
		v.SetBool(false)
	default:
		return errInvalidType(r, "a boolean")
	}
	return nil
}

func decodeString(r *reader, v reflect.Value) error {
	if r.peek() != '"' {
		return errInvalidType(r, "a string")
	}
	v.SetString(r.str())
	return nil
}

func isNumberStart(c byte) bool { return c == '-' || isDigit(c) }

// numberText returns the number at the cursor as the reference's tree holds it: an
// integer that fits i64 or u64 is normalised, which only changes "-0" to "0".
func numberText(r *reader) string {
	text := r.number()
	if len(text) == 2 && text[0] == '-' && text[1] == '0' {
		return "0"
	}
	return string(text)
}

// rustIntName is the serde expectation of a Go integer kind: Go int is taken as i64,
// uint as usize.
func rustIntName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int:
		return "i64"
	case reflect.Uint, reflect.Uintptr:
		return "usize"
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "i" + strconv.Itoa(t.Bits())
	default:
		return "u" + strconv.Itoa(t.Bits())
	}
}

func intDecoder(t reflect.Type) decodeFunc {
	name, bits := rustIntName(t), t.Bits()
	return func(r *reader, v reflect.Value) error {
		if !isNumberStart(r.peek()) {
			return errInvalidType(r, name)
		}
		n, err := strconv.ParseInt(numberText(r), 10, bits)
		if err != nil {
			return errBadNumber
		}
		v.SetInt(n)
		return nil
	}
}

func uintDecoder(t reflect.Type) decodeFunc {
	name, bits := rustIntName(t), t.Bits()
	return func(r *reader, v reflect.Value) error {
		if !isNumberStart(r.peek()) {
			return errInvalidType(r, name)
		}
		text := numberText(r)
		if text[0] == '-' {
			return errBadNumber
		}
		n, err := strconv.ParseUint(text, 10, bits)
		if err != nil {
			return errBadNumber
		}
		v.SetUint(n)
		return nil
	}
}

func floatDecoder(t reflect.Type) decodeFunc {
	name, bits := "f"+strconv.Itoa(t.Bits()), t.Bits()
	return func(r *reader, v reflect.Value) error {
		if !isNumberStart(r.peek()) {
			return errInvalidType(r, name)
		}
		// Like Rust's str::parse, out-of-range values saturate to ±Inf or 0.
		f, _ := strconv.ParseFloat(numberText(r), bits)
		v.SetFloat(f)
		return nil
	}
}

func (c *compiler) sliceDecoder(t reflect.Type) decodeFunc {
	elem := c.compile(t.Elem())
	return func(r *reader, v reflect.Value) error {
		if r.peek() != '[' {
			return errInvalidType(r, "a sequence")
		}
		r.pos++
		s := reflect.MakeSlice(t, 0, 0)
		for i := 0; r.arrayNext(); i++ {
			s = reflect.Append(s, reflect.Zero(t.Elem()))
			if err := elem(r, s.Index(i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	}
}

func (c *compiler) mapDecoder(t reflect.Type) decodeFunc {
	elem := c.compile(t.Elem())
	return func(r *reader, v reflect.Value) error {
		if r.peek() != '{' {
			return errInvalidType(r, "a map")
		}
		r.pos++
		m := reflect.MakeMap(t)
		for {
			key, escaped, ok := r.objectNext()
			if !ok {
				break
			}
			k := string(key)
			if escaped {
				k = string(appendUnescaped(nil, key))
			}
			ev := reflect.New(t.Elem()).Elem()
			if err := elem(r, ev); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), ev)
		}
		v.Set(m)
		return nil
	}
}

func decodeAny(r *reader, v reflect.Value) error {
	d := json.NewDecoder(bytes.NewReader(r.skip()))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return &decodeError{err.Error()}
	}
	if x != nil {
		v.Set(reflect.ValueOf(x))
	} else {
		v.SetZero()
	}
	return nil
}
