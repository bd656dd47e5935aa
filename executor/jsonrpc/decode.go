package jsonrpc

// Inbound envelope decoding (spec/jsonrpc.md §1.2–§1.4).
//
// Protocol flow: Parse runs the scanner over the first JSON value (syntax, value
// budget, duplicate keys, nesting), requires an object, classifies it by which members
// are present (method+id → request, method → notification, result → response, else
// error), decodes that class's members in document order, reports the first missing
// member in declaration order, and only then rejects trailing bytes. That order is the
// reference's: a well-formed but misshapen message followed by garbage reports the shape
// error, not the garbage (observed from codex 0.169.0).
//
//	Request       {"id": ID, "method": string, "params"?: any, "trace"?: W3cTraceContext}
//	Notification  {"method": string, "params"?: any, "trace"?: W3cTraceContext}
//	Response      {"id": ID, "result": any}
//	Error         {"error": {"code": i64, "message": string, "data"?: any}, "id": ID}
//
// Unknown members ("jsonrpc" included) are ignored. ID is an i64 or a string.

import (
	"encoding/json"
	"errors"
	"reflect"
)

// errNotObject is the detail for a message whose root is not an object.
var errNotObject = errors.New("expected a JSON-RPC object")

// errNoVariant is the detail for an id that is neither an i64 nor a string.
var errNoVariant = &decodeError{"data did not match any variant of untagged enum RequestId"}

// traceContext is the request's optional W3C trace carrier; it is validated, then
// dropped.
type traceContext struct {
	Traceparent *string `json:"traceparent,omitempty"`
	Tracestate  *string `json:"tracestate,omitempty"`
}

func (traceContext) RustName() string { return "W3cTraceContext" }

// errorObject is the error member of an inbound error response.
type errorObject struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (errorObject) RustName() string { return "JSONRPCErrorError" }

var (
	traceDecoder       = decoderFor(reflect.TypeFor[traceContext]())
	errorObjectDecoder = decoderFor(reflect.TypeFor[errorObject]())
)

// Parse decodes one inbound message. On failure the error text is the serde-style detail
// that goes after "failed to parse ... message from ...: " (spec/jsonrpc.md §1.4), e.g.
// "expected ident at line 1 column 2"; syntax-level failures are *SyntaxError.
//
// The returned Message aliases data (ID, Params, Result): data must not be modified
// while the Message is in use. Parse is safe for concurrent use.
func Parse(data []byte) (*Message, error) {
	s := getScanner(data, true)
	defer putScanner(s)
	if err := s.scan(); err != nil {
		return nil, err
	}
	if !s.rootObject {
		return nil, errNotObject
	}
	m, err := classify(data, s.members[:s.nmembers])
	if err != nil {
		return nil, err
	}
	s.skipWS()
	if s.pos < len(data) {
		return nil, s.errPeek(errTrailingChars)
	}
	return m, nil
}

// classify builds the Message from the root object's envelope members, given in
// document order.
func classify(data []byte, members []member) (*Message, error) {
	var has [numMembers]bool
	for _, mem := range members {
		has[mem.id] = true
	}
	m := &Message{Kind: kindOf(&has)}
	for _, mem := range members {
		if err := m.decodeMember(mem.id, data[mem.start:mem.end]); err != nil {
			return nil, err
		}
	}
	if err := missingMember(m.Kind, &has); err != nil {
		return nil, err
	}
	return m, nil
}

// kindOf is the first-match classification of spec/jsonrpc.md §1.2.
func kindOf(has *[numMembers]bool) Kind {
	switch {
	case has[memMethod] && has[memID]:
		return KindRequest
	case has[memMethod]:
		return KindNotification
	case has[memResult]:
		return KindResponse
	}
	return KindError
}

// decodeMember decodes one member that matters for m's kind; the others are ignored.
func (m *Message) decodeMember(id int, raw []byte) error {
	call := m.Kind == KindRequest || m.Kind == KindNotification
	switch {
	case id == memID && m.Kind != KindNotification:
		rid, err := decodeRequestID(raw)
		if err != nil {
			return err
		}
		m.ID = rid
	case id == memMethod && call:
		r := reader{data: raw}
		if r.peek() != '"' {
			return errInvalidType(&r, "a string")
		}
		m.Method = r.str()
	case id == memParams && call:
		m.Params = raw
	case id == memTrace && call:
		var tc traceContext
		tr := reader{data: raw} // escapes through the func value; allocate only here
		return traceDecoder(&tr, reflect.ValueOf(&tc).Elem())
	case id == memResult && m.Kind == KindResponse:
		m.Result = raw
	case id == memError && m.Kind == KindError:
		var eo errorObject
		er := reader{data: raw}
		if err := errorObjectDecoder(&er, reflect.ValueOf(&eo).Elem()); err != nil {
			return err
		}
		m.Error = &Error{Code: int(eo.Code), Message: eo.Message, Data: dataOrNil(eo.Data)}
	}
	return nil
}

// missingMember reports a required member that is absent, in the reference structs'
// declaration order.
func missingMember(k Kind, has *[numMembers]bool) error {
	switch k {
	case KindResponse:
		if !has[memID] {
			return errMissingField("id")
		}
	case KindError:
		if !has[memError] {
			return errMissingField("error")
		}
		if !has[memID] {
			return errMissingField("id")
		}
	}
	return nil
}

// Bounds of the integers that the reference reports as "integer `N` as u128/i128"
// rather than as a plain variant mismatch: magnitudes beyond u64/i64 up to these.
const (
	u128Max    = "340282366920938463463374607431768211455"
	i128MinAbs = "170141183460469231731687303715884105728"
)

// decodeRequestID validates an id and returns it in the form the reference echoes:
// integers in canonical decimal ("-0" becomes "0"), strings re-escaped the way
// serde_json writes them (only '"', '\\' and control characters escaped).
func decodeRequestID(raw []byte) (ID, error) {
	switch c := raw[0]; {
	case c == '"':
		inner := raw[1 : len(raw)-1]
		for _, b := range inner {
			if b == '\\' {
				return ID{raw: appendSerdeString(nil, appendUnescaped(nil, inner))}, nil
			}
		}
		return ID{raw: raw}, nil
	case c == '-' || isDigit(c):
		neg := c == '-'
		digits := raw
		if neg {
			digits = raw[1:]
		}
		for _, b := range digits {
			if !isDigit(b) {
				return ID{}, errNoVariant // fractions and exponents, 1.0 and 1e2 included
			}
		}
		if fitsInt64(digits, neg) {
			if neg && len(digits) == 1 && digits[0] == '0' {
				return ID{raw: []byte("0")}, nil
			}
			return ID{raw: raw}, nil
		}
		if !neg && len(digits) <= 20 && (len(digits) < 20 || string(digits) <= "18446744073709551615") {
			return ID{}, errNoVariant // a u64 that is not an i64
		}
		limit, as := u128Max, "u128"
		if neg {
			limit, as = i128MinAbs, "i128"
		}
		if len(digits) < len(limit) || len(digits) == len(limit) && string(digits) <= limit {
			return ID{}, &decodeError{"invalid type: integer `" + string(raw) + "` as " + as + ", expected any value"}
		}
		return ID{}, errNoVariant
	default:
		return ID{}, errNoVariant
	}
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

// dataOrNil drops an absent or null error.data.
func dataOrNil(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return append(json.RawMessage(nil), raw...)
}
