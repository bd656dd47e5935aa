// Package httpreq implements http/request and its streamed http/request/bodyDelta
// notifications (spec/jsonrpc.md §3.7).
//
// Layers: above is the executor's method table, which decodes params and sends the value
// Request returns (a result, or jsonrpc.Then(result, start) for streamed bodies so that
// the response precedes the first delta); below is net/http with our own proxy selection.
// The package knows nothing of sessions or transports beyond jsonrpc.Notifier.
//
// Ownership: one Client per connection. It owns the streams it starts: each stream is one
// goroutine (pump) that forwards each body read (at most deltaReadBytes, a quarter of
// MaxDeltaBytes, never waiting to fill the buffer) as one delta and blocks in Notify while
// the connection's outbound queue is full, so a stream holds at most one delta buffer in
// memory whatever the body size. Close cancels every stream and waits for the pumps.
//
// Documented deviations from codex 0.169.0: loopback targets (127/8, ::1, localhost) bypass
// proxies (the reference proxies them); request headers go out in net/http's order (sorted
// by name, repeats of one name in request order) rather than exactly in request order;
// transport error details are Go's text after the reference's "http/request failed: "
// prefix.
//
// Concurrency: Request and Close are safe for concurrent use. Lock: Client.mu guards the
// active stream table and closed flag; it is never held across I/O or Notify.
package httpreq
