package harness

// Inbound envelope decoding (spec/jsonrpc.md §1.2), with jsonwire's scanner and
// classification, the ones executor/jsonrpc uses.
//
// Protocol flow: every inbound message is one JSON object. parseMessage validates it in one
// pass (jsonwire.ScanRootUnbudgeted: syntax, duplicate keys, nesting; the executor's value
// budget is not the client's) and keeps the top-level members "id", "method", "params",
// "result" and "error" as raw spans into the message buffer; every other member is
// skipped. The spans are then walked without another check (jsonwire.ObjectMembers,
// String): a 256 MiB stream of process/output costs one validating pass (a SIMD search for
// the closing quote of each chunk) and one walk up to the members a reader needs.
//
//	{"method":"process/output","params":{"processId":"p","seq":1,"stream":"stdout","chunk":"AAAA"}}
//	 └ method span ┘          └ params span ──────────────────────────────────────────────────┘

import (
	"errors"
	"strconv"

	"github.com/execlab/executor/jsonwire"
)

// message is one inbound message. Raw spans alias the buffer given to parseMessage, which
// passed jsonwire's scanner: they may be walked with jsonwire.ObjectMembers.
type message struct {
	kind   jsonwire.Kind
	id     []byte // raw JSON of the id, nil when absent or null
	method string
	params []byte // raw JSON, nil when absent
	result []byte // raw JSON, nil when absent
	errRaw []byte // raw JSON of the error object, nil when absent
}

var (
	errNotObject = errors.New("message is not a JSON object")
	errNoClass   = errors.New("message is neither request, notification nor response")
	errBadMethod = errors.New("method is not a string")
)

// Envelope members parseMessage keeps, indexed by the env* constants.
const (
	envID = iota
	envMethod
	envParams
	envResult
	envError
	numEnv
)

var envelopeNames = []string{envID: "id", envMethod: "method", envParams: "params", envResult: "result", envError: "error"}

// parseMessage validates b, classifies it and returns its top-level members. An "id" of
// null counts as absent (the executor's error reply to a message it could not read
// carries one).
func parseMessage(b []byte) (message, error) {
	var m message
	var buf [numEnv]jsonwire.Member
	root, err := jsonwire.ScanRootUnbudgeted(b, envelopeNames, buf[:0])
	if err != nil {
		return m, err
	}
	if !root.Object {
		return m, errNotObject
	}
	if err := jsonwire.CheckTrailing(b, root.End); err != nil {
		return m, err
	}
	var method []byte
	for _, mem := range root.Members {
		v := b[mem.Start:mem.End]
		switch mem.Name {
		case envID:
			if string(v) != "null" {
				m.id = v
			}
		case envMethod:
			method = v
		case envParams:
			m.params = v
		case envResult:
			m.result = v
		case envError:
			m.errRaw = v
		}
	}
	m.kind = jsonwire.Classify(method != nil, m.id != nil, m.result != nil)
	if m.kind == jsonwire.KindError && (m.errRaw == nil || m.id == nil) {
		return m, errNoClass
	}
	if method != nil {
		if m.method, err = jsonwire.String(method); err != nil {
			return m, errBadMethod
		}
	}
	return m, nil
}

// rawMember returns the raw JSON of the member key of obj, a JSON object from a scanned
// message; the walk stops there.
func rawMember(obj []byte, key string) ([]byte, bool) {
	var out []byte
	jsonwire.ObjectMembers(obj, func(k, v []byte) bool {
		if string(k) == key {
			out = v
		}
		return out == nil
	})
	return out, out != nil
}

// memberString returns the string member key of obj, a JSON object from a scanned message.
func memberString(obj []byte, key string) (string, bool) {
	v, ok := rawMember(obj, key)
	if !ok {
		return "", false
	}
	s, err := jsonwire.String(v)
	return s, err == nil
}

// memberUint returns the unsigned integer member key of obj, a JSON object from a scanned
// message.
func memberUint(obj []byte, key string) (uint64, bool) {
	v, ok := rawMember(obj, key)
	if !ok {
		return 0, false
	}
	return parseJSONUint(v)
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
