package harness

import (
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
// verbatim; the server never sends error.data.
type RPCError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
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
