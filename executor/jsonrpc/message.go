package jsonrpc

import (
	"encoding/json"

	"github.com/execlab/executor/jsonwire"
)

// ID is a request id exactly as the client sent it: the raw JSON text of an i64 or a
// string. It is echoed byte for byte, so "7" stays a string and 7 a number.
type ID struct {
	raw []byte // nil for the zero ID
}

// IntID returns the ID for an integer.
func IntID(n int64) ID { b, _ := json.Marshal(n); return ID{raw: b} }

// StringID returns the ID for a string.
func StringID(s string) ID { b, _ := json.Marshal(s); return ID{raw: b} }

// IsZero reports whether the ID is unset.
func (id ID) IsZero() bool { return id.raw == nil }

// String returns the raw JSON text of the id.
func (id ID) String() string { return string(id.raw) }

// MarshalJSON implements json.Marshaler by echoing the raw text.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.raw == nil {
		return []byte("null"), nil
	}
	return id.raw, nil
}

// Kind classifies an inbound message (spec/jsonrpc.md §1.2: first match wins); the classes
// and the classification are jsonwire's, shared with the harness.
type Kind = jsonwire.Kind

const (
	KindRequest      = jsonwire.KindRequest      // method and id
	KindNotification = jsonwire.KindNotification // method only
	KindResponse     = jsonwire.KindResponse     // result
	KindError        = jsonwire.KindError        // id and error
)

// Message is one decoded inbound JSON-RPC message.
type Message struct {
	Kind   Kind
	ID     ID              // zero for notifications
	Method string          // requests and notifications
	Params json.RawMessage // nil when absent; otherwise the raw JSON text
	Result json.RawMessage // responses
	Error  *jsonwire.Error // error responses
	// Early is what the Handler's Arrival decoded of the request while it arrived
	// (arrival.go), nil otherwise. It is a head start only: the Handler uses it where
	// its own decoding reaches the bytes the Arrival decoded.
	Early any

	size int // bytes of the raw message and its Early value, charged against InboundBytes while queued
	// raw is the message's bytes when the connection may give them back to its
	// MessageReleaser after the request is handled (serve.go); nil otherwise.
	raw []byte
	// parsed is set by Parse: Params (and Result) lie inside the document it checked.
	parsed bool
	// paramsKnown is the string body an Arrival checked, in Params' coordinates (zero:
	// none).
	paramsKnown jsonwire.KnownString
}

// ParamsKnown is the string body inside Params that an Arrival checked while the message
// arrived (arrival.go), for jsonwire.UnmarshalCheckedParamsKnown; the zero value when
// there is none.
func (m *Message) ParamsKnown() jsonwire.KnownString { return m.paramsKnown }

// ParamsChecked reports whether Params lies inside a document Parse checked, so that it
// may be decoded with jsonwire.UnmarshalCheckedParams.
func (m *Message) ParamsChecked() bool { return m.parsed }
