// Package harness is the Go SDK for harness authors: the initiator side of the executor
// JSON-RPC protocol (spec/jsonrpc.md), wire-compatible with `codex exec-server` 0.169.0.
//
// # Layers
//
// Below: a MessageConn, one bidirectional stream of whole JSON-RPC messages. DialLocal
// provides one over a local WebSocket (github.com/coder/websocket); the relay + Noise
// transport (a later issue) will provide another. The package knows nothing of how bytes
// travel. Above: harness programs and `executor exec`/`executor bench`.
//
// The package owns request/response correlation (integer ids from 1, never reused), the
// handshake helper (Initialize sends `initialize`, then the `initialized` notification), typed
// helpers for process/* and environment/*, and delivery of server notifications. It does not
// own session recovery (resume retries) yet, nor fs/* and http/* helpers; Call reaches any
// method.
//
// # Wire
//
// Requests go out as {"id":N,"method":M,"params":P}, without a "jsonrpc" member. Inbound
// messages are classified as spec/jsonrpc.md §1.2 says (method+id → request, method →
// notification, result → response, else error). A server→client request (only
// network/policyRequest exists, and only when a process was started with networkProxy,
// which this package never asks for) is answered with -32601.
//
// # Concurrency
//
// A Client is safe for concurrent use. It owns exactly one goroutine, readLoop, started by
// Open (and so by DialLocal) and waited for by Close; nothing else starts goroutines.
// Writes are serialised by a one-slot semaphore that honours the caller's ctx while
// waiting. Once a request has been handed to the MessageConn, cancelling the call's ctx
// abandons the wait for its response but not the write; a late response is dropped.
//
// # Notifications and back-pressure
//
// Notifications are delivered in arrival order, either to Options.OnNotification (called
// on readLoop) or through the bounded channel returned by Notifications (capacity
// Options.NotificationBuffer, default DefaultNotificationBuffer). Overflow policy: block.
// When the channel is full, readLoop stops reading, which stops responses too and, through
// the transport's flow control, stalls the server's output pump. Nothing is ever dropped,
// process/output included. A consumer must therefore drain Notifications (or return from
// OnNotification) promptly and must not wait for a Call of the same Client while doing so.
//
// # Errors
//
// A JSON-RPC error response becomes *RPCError{Code, Message}. After the connection ends
// (transport error, protocol violation by the peer, or Close) every pending and later call
// fails with an error wrapping ErrClosed, and Err reports the cause.
//
// # Lock order
//
// Client.mu (pending calls, close cause) is never held while writing or delivering; the
// write semaphore is taken without holding mu.
package harness
