// Package executortest provides in-memory transports for testing the executor's JSON-RPC
// layers without sockets: Pipe returns two connected jsonrpc.MessageConn ends. Import it
// only from _test.go files.
package executortest
