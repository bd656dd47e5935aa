// Package harness is the Go SDK for harness authors: the initiator side of the executor
// JSON-RPC protocol (spec/jsonrpc.md), wire-compatible with `codex exec-server` 0.171.0 and 0.169.0.
//
// # Layers
//
// Below: a MessageConn, one bidirectional stream of whole JSON-RPC messages. DialLocal
// provides one over a local WebSocket (github.com/coder/websocket); Dial provides one over the
// relay: registry connect bundle (registry/api), rendezvous websocket (relay/wsconn), one
// relay stream on it (relay/initiator: the initiator's per-frame rules of spec/relay-noise.md
// §13 and ARQ v1; this package links no relay driver of its own) and the Noise channel as
// initiator pinning the bundle's executor key (noise/channel). Above:
// harness programs and `executor exec`/`executor bench`.
//
// The package owns request/response correlation (integer ids from 1, never reused), the
// handshake helper (Initialize sends `initialize`, then the `initialized` notification), typed
// helpers for process/* and environment/*, and delivery of server notifications. For Dial it
// also owns session recovery (session_conn.go): on any disconnect, within
// RemoteOptions.RecoveryTimeout (default 25 s, a final attempt at the deadline), a fresh
// bundle, socket, stream id and handshake, `initialize{resumeSessionId}`, re-sent in-flight
// requests that are safe to repeat (process/write keeps its writeId) and the catch-up of
// every process started on the Client, delivered without duplicates. Output the executor
// could not keep is reported as a harness/outputGap notification, never waited for
// (docs/reliability.md §6); ProcessEvents orders a process's events and gaps by seq. It
// does not own fs/* and http/* helpers; Call reaches any method.
//
// Acknowledged output (ack.go, docs/reliability.md): when the executor advertises
// processOutputAck, StartProcess opts the process in and the Client acknowledges its
// events as the consumer takes them, so the executor loses none across reconnects (it
// replays from the last ack instead of a process/read catch-up) and keeps at most a
// window in flight: a slow consumer slows the executor instead of being disconnected.
//
// Storage (storage.go): a Notification's Params, and the Chunk of a ProcessEvent, are the
// receiver's. A receiver that is done with them may hand them back for reuse: ProcessEvents.Take
// consumes (and releases) each notification and decodes output chunks into pooled
// buffers that ProcessEvent.Release returns; Notification.Release does the same for a
// notification taken otherwise. On a relay stream that spares the two large allocations
// per output chunk that otherwise dominate a fast stream's receive cost (issue 16).
// Nothing is ever reused unless released, and releasing twice is harmless.
//
// Protocol extensions (extensions.go, docs/protocol-extensions.md): CloseStdin, ResizePty,
// SendSignal and StartProcess's PtySize are used only when the executor advertised them in
// this Client's Initialize; otherwise the helpers return an error wrapping ErrNotSupported
// (errors.Is) without sending anything, and PtySize is dropped.
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
// A Client is safe for concurrent use. It owns readLoop and, without OnNotification,
// routineForward (it sends the acks), both started by Open (and so by DialLocal and Dial)
// and waited for by Close; a Dial connection also owns its relay stream (an
// initiator.Stream: the socket's keepalive goroutine and, on a stream that negotiated relay
// ARQ v1 — docs/reliability.md §8: offered by default, RemoteOptions.DisableARQ — its frame
// reader and ARQ timer goroutines); all are stopped and waited for when the physical
// connection closes. Session recoveries run on readLoop.
// Writes are serialised by a one-slot semaphore that honours the caller's ctx while
// waiting. Once a request has been handed to the MessageConn, cancelling the call's ctx
// abandons the wait for its response but not the write; a late response is dropped.
//
// # Notifications and back-pressure
//
// Notifications are delivered in arrival order, either to Options.OnNotification (called
// on readLoop) or through the channel returned by Notifications, fed from a queue bounded by
// count and bytes (Options.NotificationBuffer, default 1,024; Options.NotificationBytes,
// default 8 MiB) by routineForward. Overflow policy: block. When the queue is full, readLoop
// stops reading, which stops responses too and, through the transport's flow control,
// stalls the server's output pump. Nothing is ever dropped,
// process/output included. A consumer must therefore drain Notifications (or return from
// OnNotification) promptly and must not wait for a Call of the same Client while doing so.
//
// # Errors
//
// A JSON-RPC error response becomes *RPCError{Code, Message, Data} (Kind reads the
// error.data.kind of process/start failures). After the connection ends
// (transport error, protocol violation by the peer, or Close) every pending and later call
// fails with an error wrapping ErrClosed, and Err reports the cause.
//
// # Tracing
//
// RemoteOptions.Trace (nil by default) is called per physical connection attempt; its
// traceparent goes on the registry connect request, the rendezvous upgrade and the
// cleartext traceparent field (11) of the handshake frame. Nothing goes inside the
// encrypted stream. Nil sends none of these: the bytes are the reference's.
//
// # Lock order
//
// Client.mu (pending calls, close cause) is never held while writing or delivering; the
// write semaphore is taken without holding mu.
package harness
