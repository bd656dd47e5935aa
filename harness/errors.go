package harness

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Wire error codes (spec/jsonrpc.md §7), for branching on RPCError.Code.
const (
	// CodeInvalidRequest: handshake order, unknown session, duplicate processId, reads of
	// unknown processes, filesystem InvalidInput/PermissionDenied, and similar.
	CodeInvalidRequest = -32600
	// CodeMethodNotFound: the method is not registered (in any handshake state).
	CodeMethodNotFound = -32601
	// CodeInvalidParams: params that fail to decode or validate.
	CodeInvalidParams = -32602
	// CodeInternal: spawn failures, I/O errors, http transport failures.
	CodeInternal = -32603
	// CodeNotFound: filesystem NotFound; unknown fs/readBlock handle.
	CodeNotFound = -32004
	// CodeSessionAttached: resume of a session held by a live connection; retryable.
	CodeSessionAttached = -32010
)

// RPCError is a JSON-RPC error response from the executor. Message is the server's text,
// verbatim. Data is error.data, raw (nil when absent): codex 0.171.0 executors, and
// ours, send {"kind": K} on process/start failures; 0.169.0 executors never send it.
type RPCError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// process/start failure kinds (error.data.kind, codex 0.171.0).
const (
	KindSpawnNotFound         = "spawnNotFound"         // ENOENT: program or cwd missing
	KindSpawnPermissionDenied = "spawnPermissionDenied" // EACCES: not executable, a directory
	KindSpawnFailed           = "spawnFailed"           // every other spawn failure
	KindSandboxPreparation    = "sandboxPreparation"    // the sandbox context is invalid here
	KindSandboxUnavailable    = "sandboxUnavailable"    // the confinement cannot be had here
)

// Kind returns error.data.kind, or "" when the executor sent none (any 0.169.0 one).
func (e *RPCError) Kind() string {
	var d struct {
		Kind string `json:"kind"`
	}
	if len(e.Data) == 0 || json.Unmarshal(e.Data, &d) != nil {
		return ""
	}
	return d.Kind
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
