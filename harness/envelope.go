package harness

// Inbound envelope decoding (spec/jsonrpc.md §1.2).
//
// Protocol flow: every inbound message is one JSON object. parseMessage finds its top-level
// members without decoding their values: "id", "method", "params", "result" and "error"
// are kept as raw spans into the message buffer, every other member is skipped. Member
// values are validated only when they are decoded (a response's result by encoding/json in
// Call, a notification's params by its decoder), so a 256 MiB stream of process/output
// costs one scan for the closing quote of each chunk, not a full JSON validation pass.
//
//	{"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":"AAAA"}}
//	 └ method span ┘          └ params span ──────────────────────────────────────────────────┘

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"unicode/utf8"
)

// messageKind classifies an inbound message; first match wins (spec/jsonrpc.md §1.2).
type messageKind uint8

const (
	kindRequest      messageKind = iota + 1 // method and id
	kindNotification                        // method only
	kindResponse                            // result
	kindError                               // id and error
)

// message is one inbound message. Raw spans alias the buffer given to parseMessage.
type message struct {
	kind   messageKind
	id     []byte // raw JSON of the id, nil when absent
	method string
	params []byte // raw JSON, nil when absent
	result []byte // raw JSON, nil when absent
	errRaw []byte // raw JSON of the error object, nil when absent
}

var (
	errNotObject   = errors.New("message is not a JSON object")
	errBadSyntax   = errors.New("malformed JSON")
	errNoClass     = errors.New("message is neither request, notification nor response")
	errBadMethod   = errors.New("method is not a string")
	errTrailing    = errors.New("data after the JSON object")
	errUnexpectEOF = errors.New("unexpected end of message")
)

// parseMessage classifies b and returns its top-level members.
func parseMessage(b []byte) (message, error) {
	var m message
	var method []byte
	var hasMethod, hasID, hasResult, hasError bool
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return m, errNotObject
	}
	err := forEachMember(b, i, func(key, val []byte) error {
		switch string(key) {
		case "id":
			if !isNull(val) {
				m.id, hasID = val, true
			}
		case "method":
			method, hasMethod = val, true
		case "params":
			m.params = val
		case "result":
			m.result, hasResult = val, true
		case "error":
			m.errRaw, hasError = val, true
		}
		return nil
	})
	if err != nil {
		return m, err
	}
	switch {
	case hasMethod && hasID:
		m.kind = kindRequest
	case hasMethod:
		m.kind = kindNotification
	case hasResult:
		m.kind = kindResponse
	case hasError && hasID:
		m.kind = kindError
	default:
		return m, errNoClass
	}
	if hasMethod {
		s, ok := decodeString(method)
		if !ok {
			return m, errBadMethod
		}
		m.method = s
	}
	return m, nil
}

// forEachMember calls fn for each member of the object starting at b[start] == '{' with
// the member's unescaped key and raw value span, then checks that only whitespace follows.
func forEachMember(b []byte, start int, fn func(key, val []byte) error) error {
	end, err := walkObject(b, start, fn)
	if err != nil {
		return err
	}
	if skipSpace(b, end) != len(b) {
		return errTrailing
	}
	return nil
}

// walkObject walks the object at b[start] == '{' and returns the index after its '}'.
func walkObject(b []byte, start int, fn func(key, val []byte) error) (int, error) {
	i := skipSpace(b, start+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) {
			return 0, errUnexpectEOF
		}
		if b[i] != '"' {
			return 0, errBadSyntax
		}
		kend, err := skipString(b, i)
		if err != nil {
			return 0, err
		}
		key := b[i+1 : kend-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			s, ok := decodeString(b[i:kend])
			if !ok {
				return 0, errBadSyntax
			}
			key = []byte(s)
		}
		i = skipSpace(b, kend)
		if i >= len(b) || b[i] != ':' {
			return 0, errBadSyntax
		}
		i = skipSpace(b, i+1)
		vend, err := skipValue(b, i)
		if err != nil {
			return 0, err
		}
		if err := fn(key, b[i:vend]); err != nil {
			return 0, err
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return 0, errUnexpectEOF
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return 0, errBadSyntax
		}
	}
}

// skipValue returns the index after the JSON value starting at b[i]. Strings, objects and
// arrays are delimited exactly; scalars are taken up to the next delimiter and checked
// when decoded.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errUnexpectEOF
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		return skipNested(b, i)
	case '}', ']', ',', ':':
		return 0, errBadSyntax
	}
	j := i
	for j < len(b) && !isDelim(b[j]) {
		j++
	}
	return j, nil
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, errUnexpectEOF
		}
		q := j + k
		// The quote is escaped iff an odd number of backslashes precede it.
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
}

// skipNested returns the index after the object or array starting at b[i].
func skipNested(b []byte, i int) (int, error) {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			end, err := skipString(b, j)
			if err != nil {
				return 0, err
			}
			j = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1, nil
			}
		}
	}
	return 0, errUnexpectEOF
}

func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r', ':', '"', '{', '[':
		return true
	}
	return false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func isNull(v []byte) bool { return string(v) == "null" }

// decodeString decodes a raw JSON string; the fast path copies bytes without escapes.
func decodeString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 && validPlain(body) && utf8.Valid(body) {
		return string(body), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// validPlain reports whether an unescaped string body has no control characters or
// quotes, which JSON forbids raw.
func validPlain(body []byte) bool {
	for _, c := range body {
		if c < 0x20 || c == '"' {
			return false
		}
	}
	return true
}

// parseIntID parses a raw id as an integer request id.
func parseIntID(raw []byte) (int64, bool) {
	if len(raw) == 0 || raw[0] == '"' {
		return 0, false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil
}

// parseJSONUint parses a raw JSON number that is a plain unsigned integer (no sign,
// fraction, exponent or leading zero).
func parseJSONUint(raw []byte) (uint64, bool) {
	if len(raw) == 0 || (raw[0] == '0' && len(raw) > 1) {
		return 0, false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(string(raw), 10, 64)
	return n, err == nil
}
