// Package executortest provides in-memory transports for testing the executor's JSON-RPC
// layers without sockets. Import it only from _test.go files (test/deps_test.go checks).
//
// # Layers
//
// Above: the tests of executor, executor/jsonrpc and the method packages. Below: nothing
// but channels. An End satisfies jsonrpc.MessageConn structurally, so a server under test
// cannot tell it from a WebSocket or a relay stream; this package imports no project
// package.
//
// # Contract
//
//   - Pipe returns two connected Ends. Messages are copied on write and delivered in
//     order. Close on either end closes both; afterwards reads and writes fail with
//     ErrClosed. A ctx that ends first makes a pending call return ctx.Err().
//   - Client is a raw JSON-RPC client over one End: Send (a value or a raw string), Recv
//     and TryRecv (messages decoded as maps), Call (a request and its response, with the
//     notifications that arrived first), Handshake (initialize + initialized). Failures
//     end the test through testing.TB.
//
// # Limits
//
// Buffer (64) messages queue per direction; a writer blocks beyond that, which gives
// tests the same back-pressure as a real transport. Client's Send and Recv wait at most
// 5 s (a test-failure bound, not a protocol timer).
//
// # Concurrency
//
// An End's ReadMessage and WriteMessage may run concurrently with each other, as
// jsonrpc.MessageConn requires; Close may be called any number of times from any
// goroutine. A Client is not safe for concurrent use. Nothing here starts goroutines.
package executortest
