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

	"github.com/execlab/executor/jsonwire"
)

// errNotObject is the detail for a message whose root is not an object.
var errNotObject = errors.New("expected a JSON-RPC object")

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

// Envelope member names Parse cares about, indexed by the mem* constants.
const (
	memID = iota
	memMethod
	memParams
	memResult
	memError
	memTrace
	numMembers
)

var memberNames = []string{memID: "id", memMethod: "method", memParams: "params", memResult: "result", memError: "error", memTrace: "trace"}

// Parse decodes one inbound message. On failure the error text is the serde-style detail
// that goes after "failed to parse ... message from ...: " (spec/jsonrpc.md §1.4), e.g.
// "expected ident at line 1 column 2"; syntax-level failures are *jsonwire.SyntaxError.
//
// The returned Message aliases data (ID, Params, Result): data must not be modified
// while the Message is in use. Parse is safe for concurrent use.
func Parse(data []byte) (*Message, error) { return parseKnown(data, jsonwire.KnownString{}) }

// parseKnown is Parse for a message in which an Arrival has already checked one string
// body (jsonwire.ScanRootKnown); the result is Parse's.
func parseKnown(data []byte, known jsonwire.KnownString) (*Message, error) {
	var buf [numMembers]jsonwire.Member
	root, err := jsonwire.ScanRootKnown(data, memberNames, buf[:0], known)
	if err != nil {
		return nil, err
	}
	if !root.Object {
		return nil, errNotObject
	}
	m, err := classify(data, root.Members)
	if err != nil {
		return nil, err
	}
	if known.End > 0 {
		m.paramsKnown = knownInParams(root.Members, known)
	}
	if err := jsonwire.CheckTrailing(data, root.End); err != nil {
		return nil, err
	}
	m.parsed = true
	return m, nil
}

// knownInParams is known in the coordinates of the params member, when it lies inside it.
func knownInParams(members []jsonwire.Member, known jsonwire.KnownString) jsonwire.KnownString {
	for _, mem := range members {
		if mem.Name == memParams && mem.Start < known.Start && known.End < mem.End {
			return jsonwire.KnownString{Start: known.Start - mem.Start, End: known.End - mem.Start}
		}
	}
	return jsonwire.KnownString{}
}

// classify builds the Message from the root object's envelope members, given in
// document order.
func classify(data []byte, members []jsonwire.Member) (*Message, error) {
	var has [numMembers]bool
	for _, mem := range members {
		has[mem.Name] = true
	}
	m := &Message{Kind: jsonwire.Classify(has[memMethod], has[memID], has[memResult])}
	for _, mem := range members {
		if err := m.decodeMember(mem.Name, data[mem.Start:mem.End]); err != nil {
			return nil, err
		}
	}
	if err := missingMember(m.Kind, &has); err != nil {
		return nil, err
	}
	return m, nil
}

// decodeMember decodes one member that matters for m's kind; the others are ignored.
func (m *Message) decodeMember(id int, raw []byte) error {
	call := m.Kind == KindRequest || m.Kind == KindNotification
	switch {
	case id == memID && m.Kind != KindNotification:
		rid, err := jsonwire.RequestID(raw)
		if err != nil {
			return err
		}
		m.ID = ID{raw: rid}
	case id == memMethod && call:
		method, err := jsonwire.String(raw)
		if err != nil {
			return err
		}
		m.Method = method
	case id == memParams && call:
		m.Params = raw
	case id == memTrace && call:
		var tc traceContext
		return jsonwire.Decode(raw, &tc)
	case id == memResult && m.Kind == KindResponse:
		m.Result = raw
	case id == memError && m.Kind == KindError:
		var eo errorObject
		if err := jsonwire.Decode(raw, &eo); err != nil {
			return err
		}
		m.Error = &jsonwire.Error{Code: int(eo.Code), Message: eo.Message, Data: dataOrNil(eo.Data)}
	}
	return nil
}

// missingMember reports a required member that is absent, in the reference structs'
// declaration order.
func missingMember(k Kind, has *[numMembers]bool) error {
	switch k {
	case KindResponse:
		if !has[memID] {
			return jsonwire.MissingField("id")
		}
	case KindError:
		if !has[memError] {
			return jsonwire.MissingField("error")
		}
		if !has[memID] {
			return jsonwire.MissingField("id")
		}
	}
	return nil
}

// dataOrNil drops an absent or null error.data.
func dataOrNil(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return append(json.RawMessage(nil), raw...)
}
