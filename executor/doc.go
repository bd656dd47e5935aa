// Package executor is the JSON-RPC server of the executor: it binds the methods of
// spec/jsonrpc.md (process/*, fs/*, http/request, environment/*) to one session per
// client and serves any jsonrpc.MessageConn — a local WebSocket, the stdio stream, or a
// decrypted relay stream; it cannot tell which.
//
// Layers: executor/jsonrpc below (envelope, scheduling, outbound queue); the method
// packages executor/process, executor/fs and executor/httpreq beside it; executor/session
// for session lifetime. Transports (WebSocket, stdio, relay) live above, in cmd/.
//
// Per connection: handshake state (initialize, then the initialized notification), the
// attached session, fs/open handles and streamed HTTP bodies. Per session (outlives the
// connection for the TTL): the process table. Connection loss detaches the session at
// once; Server.Close ends every connection, waits for its ServeConn to return, then kills
// every process of every session (the contract is on the Server type).
//
// Lock order: conn.mu is never held while calling into session.Table or a method
// package.
package executor
