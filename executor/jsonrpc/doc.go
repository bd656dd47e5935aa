// Package jsonrpc runs the exec-server's JSON-RPC 2.0 protocol over one message stream:
// the envelope (which member makes a message a request, a notification, a response or
// an error), dispatch in the reference's lanes, and the bounded queues between the
// transport and the handlers (spec/jsonrpc.md §1). It knows no methods.
//
// # Layers
//
// Above: package executor, whose per-connection Handler routes methods to
// executor/process, executor/fs and executor/httpreq; cmd/executor/internal/serve and
// cmd/executor/internal/remote hand it a MessageConn. Below: a MessageConn (defined
// here, by its consumer): a local WebSocket (internal/wsmsg), a stdio line stream, or a
// decrypted relay stream (noise/channel.Conn) — this package cannot tell which — and
// package jsonwire, which holds the serde_json-compatible decoding, the error codes and
// the Error type. The harness SDK does not import this package (test/deps_test.go).
//
// # What it owns
//
//   - Parse (decode.go): classifies one inbound message by its members, first match
//     wins (method+id, method, result, else error), decodes them in document order,
//     reports the first missing member in the reference's declaration order and only
//     then trailing bytes: the reference's order, so a misshapen message followed by
//     garbage reports the shape. Ids are echoed byte for byte as the reference echoes
//     them (Message.ID).
//   - Conn (serve.go): Run owns a read loop, a dispatch loop and one writer. Malformed
//     input gets -32600 with id -1 and Options.ParseErrorPrefix before the decoder
//     detail. Handler.Lane puts each request on the serial lane (default: one at a time,
//     in order) or, with ConcurrentRequests ≥ 2, on the control or the ordinary lane.
//     Then (conn.go) lets a result run code after its response is queued, so streamed
//     notifications follow it. A Handler that is also an InlineHandler takes chosen
//     notifications (flow-control acknowledgements) on the read loop itself, so they
//     are never held behind a blocked request.
//   - Server→client requests (call.go): Call sends {"id":N,"method":M,"params":P} with
//     ids 1, 2, … per connection, at most MaxPendingCalls (256) awaiting replies (beyond
//     it ErrTooManyCalls, no id used), and waits for the reply, ctx, or the end of the
//     read loop (every pending call then fails at once with ErrConnClosed). Replies are
//     routed by id on the read loop; one to an issued id with no call waiting (duplicate,
//     late) is ignored; one to an id never issued — 0, a string, a future id — closes the
//     connection, the rule from before the server sent requests (codex 0.171.0, probed).
//     NotifyBestEffort (the network/policyDecision audit) never waits: it is dropped and
//     counted unless BestEffortReserve (16) slots stay free for replies and process
//     notifications. ClientLink follows a session across connections; a call stays with
//     the connection it was sent on and is never re-sent after a resume.
//   - Decoding while a message arrives (arrival.go): when the MessageConn is an
//     ArrivingReader (internal/wsmsg) and the Handler an EarlyDecoder (the executor:
//     fs/writeBlock's chunk), the read loop shows each message's bytes to the Handler's
//     Arrival as they come in; Parse skips the string body the Arrival checked and the
//     Arrival's value reaches Handle as Message.Early. A head start only: every result
//     and every error is the one the message gets without it.
//   - Outbound encoding (serve.go, message.go): responses, errors and notifications, with
//     AppendJSONer for hand-written encoders and encoding/json without HTML escaping for
//     the rest, as serde writes them.
//
// # Limits (limits.go)
//
// The per-message JSON limits are jsonwire's (MaxValues, MaxDepth). Here, our choices:
// OutboundQueue and InboundQueue (128 messages each, the reference's outbound size) and
// the byte budgets OutboundBytes (4 MiB) and InboundBytes (16 MiB). Every queue blocks
// when full — back-pressure on the handler or on the transport's reader — and never
// drops; one message larger than a byte budget still passes alone, so the transport's
// message limit stays the only cap on a single message.
//
// # Concurrency and shutdown
//
// NewConn starts nothing. Run returns only after every goroutine it started has exited;
// in-flight handlers see their ctx cancelled, and replies still queued when the read side
// ends are dropped (an unanswered request at EOF gets no reply, §1.1). Notify is safe for
// concurrent use, blocks while the outbound budget is full and fails with ErrConnClosed
// once shutdown has begun. A Handler returning ErrClose ends the connection without a
// reply. Parse is safe for concurrent use; a Message aliases the bytes it was parsed from.
// Call and NotifyBestEffort are safe for concurrent use; Call blocks like Notify while
// the outbound queue is full, then until its reply, its ctx or the connection's end.
//
// Locks: qmu guards the outbound queue and byte count, imu the inbound byte count,
// calls.mu the pending calls, the id counter and the call counters, ClientLink.mu its
// current connection. They are leaves: none is held while another is taken (Call takes
// calls.mu, releases it, then qmu in push; the read loop takes calls.mu alone in route),
// nor across a transport call or a blocking channel operation (a pending call's channel
// has room for its one result).
package jsonrpc
