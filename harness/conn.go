package harness

import "context"

// MessageConn is one bidirectional stream of whole JSON-RPC messages: a local WebSocket
// (DialLocal) or a decrypted relay stream (Dial). Its method set matches the executor's
// jsonrpc.MessageConn, so the same adapters serve both ends.
//
// ReadMessage and WriteMessage may run concurrently with each other, each from one
// goroutine at a time (the Client guarantees this). ReadMessage returns a buffer the caller
// owns. After any error from ReadMessage the connection is finished. Close unblocks pending
// calls and may be called more than once.
type MessageConn interface {
	ReadMessage(ctx context.Context) ([]byte, error)
	WriteMessage(ctx context.Context, msg []byte) error
	Close() error
}
