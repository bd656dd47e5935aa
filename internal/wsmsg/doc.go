// Package wsmsg adapts a coder/websocket connection to the message-conn shape used by
// the JSON-RPC layers (ReadMessage / WriteMessage / Close): one JSON-RPC message per
// WebSocket message, Text and Binary both read, messages written as Text. It is shared by
// the local server transport (cmd/executor/internal/serve) and the harness SDK's local
// dial; it knows nothing of JSON-RPC.
//
// ReadMessage must be called from one goroutine at a time (it reuses a buffer). A message
// of 256 KiB or more is returned in the read buffer itself, which then belongs to the
// caller; ReleaseMessage (safe from any goroutine; executor/jsonrpc.MessageReleaser) gives
// it back for the next large message once nothing refers to it. WriteMessage is safe for
// concurrent use (the websocket library serialises writers); Close is idempotent.
//
// Layers: above coder/websocket; below executor/jsonrpc.MessageConn's users (the local
// serve transport) and harness.MessageConn's (DialLocal), which it satisfies structurally.
// It is not used on the relay path: relay/wsconn carries binary relay frames there.
//
// Limits: the read buffer kept between messages, and one given back, are each capped at
// 2 MiB (maxRetainedReadBuffer); the message size limit is the websocket's read limit, set
// by the caller.
package wsmsg
