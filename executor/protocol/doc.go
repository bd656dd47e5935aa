// Package protocol holds the executor's JSON-RPC wire types and method names, with JSON
// shapes exactly as spec/jsonrpc.md (wire-compatible with codex exec-server 0.169.0).
//
// Decoding convention (jsonwire.UnmarshalParams, serde semantics): a non-pointer
// field without omitempty is required; a pointer field is an Option (absent or null →
// nil); a non-pointer field with omitempty has a serde default (absent → zero value,
// null → error). Unknown members are ignored.
//
// PathURI (pathuri.go) is the on-the-wire form of every filesystem path.
//
// The package has no behaviour beyond encoding and validation; it starts no goroutines.
package protocol
