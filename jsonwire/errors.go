package jsonwire

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Wire error codes (spec/jsonrpc.md §7). These are the only codes the executor sends.
const (
	// CodeInvalidRequest: malformed message (sent with id -1), handshake order, unknown session,
	// duplicate processId, filesystem InvalidInput/PermissionDenied, and similar.
	CodeInvalidRequest = -32600
	// CodeMethodNotFound: unregistered method, in any handshake state.
	CodeMethodNotFound = -32601
	// CodeInvalidParams: params that fail to decode or validate.
	CodeInvalidParams = -32602
	// CodeInternal: spawn failures, I/O errors, http transport failures.
	CodeInternal = -32603
	// CodeNotFound: filesystem NotFound; unknown fs/readBlock handle.
	CodeNotFound = -32004
	// CodeSessionAttached: resume of a session held by a live connection (retryable).
	CodeSessionAttached = -32010
)

// Error is a JSON-RPC error object as sent on the wire: {"code":C,"message":S} plus,
// when Data is set, "data" (codex 0.171.0 sends {"kind":K} on process/start errors; a
// 0.169.0 client ignores it). Handlers return *Error to choose the code; any other
// error reaching the RPC boundary is sent as CodeInternal with its text.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	// Data is the raw JSON of error.data; nil means absent (never sent as null).
	Data json.RawMessage `json:"data,omitempty"`
}

// ErrorKind is the value of error.data.kind, the machine-readable class codex 0.171.0
// attaches to process/start errors (shared/spec/changes-0.171.0.md). The code and
// message are unchanged by it; a 0.169.0 peer neither sends nor reads it.
type ErrorKind string

// process/start failure kinds (codex 0.171.0; the layers that raise them say when).
const (
	KindSpawnNotFound         ErrorKind = "spawnNotFound"         // ENOENT: program or cwd missing
	KindSpawnPermissionDenied ErrorKind = "spawnPermissionDenied" // EACCES/EPERM: not executable, a directory
	KindSpawnFailed           ErrorKind = "spawnFailed"           // every other spawn failure
	KindSandboxPreparation    ErrorKind = "sandboxPreparation"    // the sandbox context is invalid here
	KindSandboxUnavailable    ErrorKind = "sandboxUnavailable"    // the confinement cannot be had here
)

// WithKind returns a copy of e whose data is {"kind":k}.
func (e *Error) WithKind(k ErrorKind) *Error {
	c := *e
	c.Data = appendJSONString(append([]byte(nil), `{"kind":`...), string(k))
	c.Data = append(c.Data, '}')
	return &c
}

// appendJSONString appends s as the executor's encoder writes a string (encoding/json
// without HTML escaping), so error data reads like every other outbound string.
func appendJSONString(b []byte, s string) []byte {
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	out := buf.Bytes()
	return out[:len(out)-1]
}

// Kind returns error.data.kind, or "" when data is absent or has no string kind.
func (e *Error) Kind() ErrorKind {
	if len(e.Data) == 0 {
		return ""
	}
	var d struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(e.Data, &d) != nil {
		return ""
	}
	return ErrorKind(d.Kind)
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// InvalidRequest returns a CodeInvalidRequest error with the given message.
func InvalidRequest(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidRequest, Message: sprintf(format, args...)}
}

// InvalidParams returns a CodeInvalidParams error with the given message.
func InvalidParams(format string, args ...any) *Error {
	return &Error{Code: CodeInvalidParams, Message: sprintf(format, args...)}
}

// Internal returns a CodeInternal error with the given message.
func Internal(format string, args ...any) *Error {
	return &Error{Code: CodeInternal, Message: sprintf(format, args...)}
}

// NotFound returns a CodeNotFound error with the given message.
func NotFound(format string, args ...any) *Error {
	return &Error{Code: CodeNotFound, Message: sprintf(format, args...)}
}

func sprintf(format string, args ...any) string {
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}
