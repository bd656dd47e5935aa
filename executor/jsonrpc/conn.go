package jsonrpc

import "context"

// MessageConn is one bidirectional message stream: a local WebSocket, one stdio line
// stream, or a decrypted relay stream. The jsonrpc layer cannot tell which.
//
// ReadMessage and WriteMessage may be called concurrently with each other, but each only
// from one goroutine at a time. After any error from ReadMessage the connection is
// finished. Close unblocks pending calls. WriteMessage must not keep msg (or any part of
// it) after it returns: the caller reuses the buffer for later messages. A MessageConn
// that hands out its own read buffers also implements MessageReleaser (serve.go).
type MessageConn interface {
	ReadMessage(ctx context.Context) ([]byte, error)
	WriteMessage(ctx context.Context, msg []byte) error
	Close() error
}

// Notifier sends server→client notifications on the currently attached connection.
//
// Notify blocks while the connection's outbound queue is full (back-pressure: a process
// output pump stalls instead of dropping) and returns an error once the connection is
// gone or ctx is done; the notification is then dropped. params is marshalled with its
// AppendJSON([]byte) []byte method when it has one (hot paths), else with encoding/json,
// before Notify returns: the caller may reuse any buffer params refers to afterwards.
type Notifier interface {
	Notify(ctx context.Context, method string, params any) error
}

// AppendJSONer is implemented by wire types with a hand-written encoder. AppendJSON
// appends the value's JSON encoding to b and returns the extended slice.
type AppendJSONer interface {
	AppendJSON(b []byte) []byte
}

// Then wraps a request result with a function to run after the response has been queued
// on the connection, so that notifications started by then follow the response (used by
// streamed http/request bodies, spec/jsonrpc.md §3.7). The connection runs then in the
// request's goroutine, after queueing; it must not block for long.
func Then(result any, then func()) any { return &thenResult{result: result, then: then} }

type thenResult struct {
	result any
	then   func()
}
