// Package httpreq implements http/request and its streamed http/request/bodyDelta
// notifications (spec/jsonrpc.md §3.7).
//
// # Layers
//
// Above: the executor's method table, which decodes params (jsonwire.UnmarshalParams)
// and sends the value Request returns: a result, or jsonrpc.Then(result, start) for a
// streamed body, so that the response precedes the first delta. Below: net/http with our
// own proxy selection (proxy.go). The package knows nothing of sessions or transports
// beyond jsonrpc.Notifier; its errors are *jsonwire.Error with the reference's texts
// (-32602 for validation, -32603 "http/request failed: …" for transport failures).
//
// # Contract
//
//   - Validation happens before any I/O and in the reference's order (method, URL,
//     scheme, host, headers, valueEnvVar rules with its denied variables).
//   - A buffered request returns the whole body base64-encoded in the result. A streamed
//     one (streamResponse with a requestId) returns status and headers with an empty
//     body, then bodyDelta notifications with seq from 1, contiguous, the last one done
//     (with error on a failed read); a requestId may have one active stream per client.
//   - A followed redirect that leaves the request's origin (scheme, host or port changes, at
//     any hop) drops Authorization, Proxy-Authorization, Cookie, Cookie2 and
//     WWW-Authenticate, including values built from valueEnvVar, for the rest of the chain;
//     a same-origin redirect keeps them. The reference (reqwest) does the same, observed
//     for port and host changes (conformance scenario http_redirect_credentials); net/http
//     alone would keep them across ports, schemes and into subdomains.
//
// Documented deviations from codex 0.169.0: loopback targets (127/8, ::1, localhost) bypass
// proxies (the reference proxies them); request headers go out in net/http's order (sorted
// by name, repeats of one name in request order) rather than exactly in request order;
// transport error details are Go's text after the reference's "http/request failed: "
// prefix.
//
// # Limits (limits.go)
//
// Wire: a bodyDelta carries at most MaxDeltaBytes (1 MiB decoded); redirectPolicy
// "follow" follows at most MaxRedirects (10). Implementation: one body read, hence one
// delta, carries at most deltaReadBytes (a quarter of MaxDeltaBytes, measured as the
// fastest on loopback), never waiting to fill the buffer, so a stream holds at most one
// delta buffer in memory whatever the body size.
//
// # Concurrency and ownership
//
// One Client per connection. It owns the streams it starts: each stream is one goroutine
// (pump) that forwards each body read as one delta and blocks in Notify while the
// connection's outbound queue is full (back-pressure, never a drop). Close cancels every
// stream and waits for the pumps; no stream starts after Close. Request and Close are
// safe for concurrent use. Lock: Client.mu guards the active stream table and the closed
// flag; it is never held across I/O or Notify.
package httpreq
