// Package wsconn adapts a github.com/coder/websocket connection to the relay's frame
// connection (mux.FrameConn): one binary websocket message = one encoded RelayMessageFrame.
// It is the only relay package that imports a websocket library (spec/relay-noise.md §9–§11,
// spec/registry-auth.md §10).
//
// Layers: below relay/mux (which defines FrameConn) and registry/rendezvous; above
// coder/websocket and TCP. It never decodes frames: messages are opaque bytes.
//
// What it owns:
//
//   - Conn: ReadFrame (binary only; a text message is read, dropped and reported with an error
//     wrapping frame.ErrNonBinary, the conn stays usable), WriteFrame (bounded by WriteTimeout;
//     a stuck write fails the conn), Close (drops TCP without a close frame, as the reference
//     executor does), WriteFrameSplit (a frame given as head and tail, mux.SplitFrameWriter),
//     Keepalive (Ping every 30 s, only one outstanding; no Pong within 60 s
//     drops the conn with reason pong_timeout), Reason (typed close reason).
//   - Dial: the executor's rendezvous dial: the URL verbatim (its sig= query is the
//     credential), extra headers (x-request-id, traceparent) from the caller, no
//     authorization/origin/subprotocol, TCP_NODELAY, 10 s for TCP + upgrade. A rejected
//     upgrade is a *DialError carrying the HTTP status so callers can tell 4xx (re-register)
//     from 5xx/network (redial the same URL).
//   - Accept: the server side for a rendezvous, with the same limits.
//   - Backoff: the reconnect delay schedule (1 s doubling to 30 s, uniform in [base/2, base]
//     by default; other spreads for the registry retry and the harness).
//   - RedactURL: scheme://host/path of a URL, for logs and errors; the query (sig=) and
//     userinfo never appear in anything this package prints or returns.
//
// Limits (limits.go): 256 KiB per message (larger messages fail the conn: read_error), ping
// 30 s, pong deadline 60 s, write deadline 60 s, dial 10 s.
//
// Concurrency: ReadFrame is called by one goroutine at a time; WriteFrame by one goroutine at
// a time (concurrently with ReadFrame); Keepalive by one goroutine, concurrently with a running
// ReadFrame loop (Pongs are read by ReadFrame). Close and Reason are safe from any goroutine.
// The package starts no goroutines of its own beyond those coder/websocket starts per
// connection (stopped by Close); Keepalive runs on its caller's goroutine.
//
// Writing: a dialled connection batches each frame into one write syscall (cork.go); on a
// ws:// dial (no TLS) it also builds and masks its binary frames itself, head and tail in one
// pass into a pooled buffer (rawframe.go), while coder/websocket writes only the control
// frames, each in one write under the same lock. An accepted connection without TLS writes
// its binary frames itself too, unmasked: header, head and tail in one writev, no copy (the
// library's write buffer is moved onto a corkConn at hijack, so its control frames take the
// same lock). Every binary write is bounded by WriteTimeout and ctx (a write deadline on the
// socket, cut short when ctx ends) and fails the conn. Over TLS (wss), and on a dial with a
// caller's HTTPClient, the library writes every frame.
//
// Memory: an idle Conn holds no read buffer; a 64 KiB buffer is taken from a pool once a
// message has begun. A message of 32 KiB or more is returned in that buffer (no copy; a
// forwarder hands it back with ReleaseFrame after writing it), a smaller one exactly sized;
// a returned message's capacity is at most twice its length.
package wsconn
