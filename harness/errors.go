package harness

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/execlab/executor/jsonwire"
)

// RPCError is a JSON-RPC error response from the executor. Code is one of the wire codes
// of package jsonwire (jsonwire.CodeInvalidRequest, jsonwire.CodeSessionAttached, …), the
// one table the executor and the SDK share. Message is the server's text, verbatim. Data is error.data, raw (nil when absent): codex 0.171.0 executors, and
// ours, send {"kind": K} on process/start failures; 0.169.0 executors never send it.
type RPCError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Kind returns error.data.kind, one of the jsonwire.Kind… values (process/start
// failures), or "" when the executor sent none (any 0.169.0 one).
func (e *RPCError) Kind() jsonwire.ErrorKind {
	var d struct {
		Kind string `json:"kind"`
	}
	if len(e.Data) == 0 || json.Unmarshal(e.Data, &d) != nil {
		return ""
	}
	return jsonwire.ErrorKind(d.Kind)
}

func (e *RPCError) Error() string { return fmt.Sprintf("executor error %d: %s", e.Code, e.Message) }

var (
	// ErrClosed is wrapped by every error of a call made on, or pending on, a Client
	// whose connection has ended. Client.Err tells why it ended.
	ErrClosed = errors.New("harness: connection closed")

	// ErrProtocol is wrapped by the cause reported by Client.Err when the peer sent
	// something that is not a JSON-RPC message; the Client then closes the connection.
	ErrProtocol = errors.New("harness: protocol violation by the executor")
)
