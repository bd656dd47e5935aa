// Package wsmsg adapts a coder/websocket connection to the message-conn shape used by
// the JSON-RPC layers (ReadMessage / WriteMessage / Close): one JSON-RPC message per
// WebSocket message, Text and Binary both read, messages written as Text. It is shared by
// the local server transport (cmd/executor/internal/serve) and the harness SDK's local
// dial; it knows nothing of JSON-RPC.
//
// ReadMessage must be called from one goroutine at a time (it reuses a buffer);
// WriteMessage is safe for concurrent use (the websocket library serialises writers);
// Close is idempotent.
//
// Layers: above coder/websocket; below executor/jsonrpc.MessageConn's users (the local
// serve transport) and harness.MessageConn's (DialLocal), which it satisfies structurally.
// It is not used on the relay path: relay/wsconn carries binary relay frames there.
//
// Limits: the read buffer kept between messages is capped at 2 MiB
// (maxRetainedReadBuffer); the message size limit is the websocket's read limit, set by the
// caller.
package wsmsg
