// Package chaos is the fault-injecting rendezvous proxy behind `executor chaos`: it sits
// between executors/harnesses and a registry + rendezvous (registry/server,
// registry/rendezvous) and cuts, stalls, delays, drops, duplicates or reorders the relay's
// frames on the executor's side, the harnesses' side or both, on a schedule or on demand.
// It drives the fault tests in test/e2e, and users can point their own harness at it.
//
// # Where it sits
//
//	executor ──ws──▶ chaos ──ws──▶ rendezvous ◀──ws── chaos ◀──ws── harness
//	         ──http (register, validate)──▶ registry ◀──http (connect)──
//
// The registry must hand out rendezvous URLs that point at the proxy (registry serve
// --public-url = the proxy's URL), and the executor and harness use the proxy as their
// registry URL. Every HTTP request is relayed unchanged to Upstream; requests under the
// rendezvous base path with a websocket upgrade become links: the proxy dials the same
// path and query upstream (the signed URL is forwarded verbatim, never logged), then
// accepts the client, and relays whole websocket messages (one RelayMessageFrame each)
// both ways. A refused upstream upgrade is answered with the upstream's status, so the
// executor's 4xx/5xx rules (spec/relay-noise.md §11) still see the real answer.
//
// Sides come from the path: /rendezvous/v1/environment/… and the register and validate
// calls are the executor's; /rendezvous/v1/harness/… and connect are the harness's.
//
// # Faults (Fault, ParseFault)
//
//   - cut: the side's links are closed (TCP close) and its requests answered 502 until
//     the cut ends.
//   - stall: the side's TCP connections are frozen (gatedConn): bytes read are held,
//     writes wait, so neither frames nor Pongs pass and no FIN or RST is sent; new
//     requests wait. When the stall ends everything queued flows on, unless an endpoint
//     gave up meanwhile.
//   - delay: every frame is held for the delay (order kept).
//   - drop, dup, reorder: with the given probability per data frame (handshakes, resets,
//     resumes and ack_frames are never touched; acks piggybacked on a dropped data frame
//     are lost with it), discard it, send it twice, or hold it ReorderHold so later frames
//     overtake it. Relay ARQ v1 (docs/reliability.md §8) repairs all three between our
//     harness and our executor; Stats counts its feature frames, ack_frames and frames
//     with ack fields.
//
// Triggers: time since Serve started, or bytes of frames relayed (both directions, all
// links). The schedule is a pure state machine (Plan: inputs now and bytes, outputs fired
// faults and per-frame verdicts); each direction's delay line (line) is pure too.
//
// # Limits and overflow policy (limits.go)
//
// Each direction holds at most LineFrames frames; past that its reader blocks (TCP
// back-pressure), never drops. At most MaxFaults faults; specs up to MaxSpecLength bytes.
//
// # Concurrency and ownership
//
// Proxy methods are safe for concurrent use. Serve owns everything: the HTTP server, the
// schedule goroutine, and per link a pump and a writer per direction (link.run). It
// closes every link when its ctx ends and returns after they stopped. Proxy.mu is a leaf
// lock; direction.mu guards one delay line.
//
// # Layers
//
// Above: cmd/executor (`executor chaos`), test/e2e. Below: relay/wsconn (websocket accept
// and dial), relay/frame (only to tell data frames apart), registry/api and
// registry/rendezvous (path layout only). It never decrypts and never logs payloads, URL
// queries or tokens.
package chaos
