package protocol

import (
	"encoding/json"
	"strconv"

	"github.com/execlab/executor/jsonwire"
)

// http/request params, result and the bodyDelta notification (spec/jsonrpc.md §3.7).

// HTTPHeader is one request header. With ValueEnvVar the value sent is Value followed by
// that executor environment variable (capabilities.httpHeaderEnvVars).
type HTTPHeader struct {
	Name        string  `json:"name"`
	Value       string  `json:"value"`
	ValueEnvVar *string `json:"valueEnvVar,omitempty"`
}

// HTTPRedirectPolicy is "follow" (default) or "stop".
type HTTPRedirectPolicy string

const (
	HTTPRedirectFollow HTTPRedirectPolicy = "follow"
	HTTPRedirectStop   HTTPRedirectPolicy = "stop"
)

// Variants lists the wire values for decode errors.
func (HTTPRedirectPolicy) Variants() []string { return []string{"follow", "stop"} }

// UnmarshalJSON accepts exactly the variants, with serde's error texts.
func (p *HTTPRedirectPolicy) UnmarshalJSON(b []byte) error {
	var s string
	if len(b) == 0 || b[0] != '"' {
		if string(b) == "null" {
			return &PathURIError{Msg: "invalid type: null, expected string or map"}
		}
		return &PathURIError{Msg: "invalid type: " + jsonwire.Unexpected(b) + ", expected string or map"}
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	switch HTTPRedirectPolicy(s) {
	case HTTPRedirectFollow, HTTPRedirectStop:
		*p = HTTPRedirectPolicy(s)
		return nil
	}
	return &PathURIError{Msg: "unknown variant `" + s + "`, expected `follow` or `stop`"}
}

// HTTPRequestParams are the params of http/request. Headers defaults to [] and
// RedirectPolicy to follow; TimeoutMs nil = no timeout.
type HTTPRequestParams struct {
	Method         string             `json:"method"`
	URL            string             `json:"url"`
	Headers        []HTTPHeader       `json:"headers,omitempty"`
	BodyBase64     *jsonwire.Bytes    `json:"bodyBase64"`
	TimeoutMs      *uint64            `json:"timeoutMs"`
	RedirectPolicy HTTPRedirectPolicy `json:"redirectPolicy,omitempty"`
	RequestID      string             `json:"requestId"`
	StreamResponse bool               `json:"streamResponse,omitempty"`
}

// HTTPResponseHeader is one response header (non-UTF-8 values are dropped).
type HTTPResponseHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// HTTPRequestResult is the result of http/request; BodyBase64 is empty when streaming.
type HTTPRequestResult struct {
	Status     uint16               `json:"status"`
	Headers    []HTTPResponseHeader `json:"headers"`
	BodyBase64 string               `json:"bodyBase64"`
}

// HTTPBodyDelta is the http/request/bodyDelta notification: Seq from 1, contiguous; the
// last frame has Done and an empty delta; Error only on that last frame.
type HTTPBodyDelta struct {
	RequestID   string         `json:"requestId"`
	Seq         uint64         `json:"seq"`
	DeltaBase64 jsonwire.Bytes `json:"deltaBase64"`
	Done        bool           `json:"done"`
	Error       *string        `json:"error"`
}

// AppendJSON encodes the notification without reflection (deltas are up to 1 MiB).
func (d *HTTPBodyDelta) AppendJSON(b []byte) []byte {
	b = append(b, `{"requestId":`...)
	b = appendProcessJSONString(b, d.RequestID)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, d.Seq, 10)
	b = append(b, `,"deltaBase64":`...)
	b = d.DeltaBase64.AppendJSON(b)
	b = append(b, `,"done":`...)
	b = strconv.AppendBool(b, d.Done)
	b = append(b, `,"error":`...)
	if d.Error == nil {
		b = append(b, "null"...)
	} else {
		b = appendProcessJSONString(b, *d.Error)
	}
	return append(b, '}')
}
