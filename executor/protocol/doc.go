// Package protocol holds the executor's JSON-RPC wire types and method names, with JSON
// shapes exactly as spec/jsonrpc.md (wire-compatible with codex exec-server 0.171.0 and
// 0.169.0), and PathURI, the on-the-wire form of every filesystem path.
//
// # Layers
//
// Above: the server (package executor and the method packages executor/process, fs,
// httpreq) and the harness SDK, which share these types; that is why this package must
// link no server code (test/deps_test.go, TestHarnessLinksNoServer). Below: jsonwire
// (Bytes, the serde decoding conventions, *Error for PathUri failures) and
// sandbox/policy (the sandbox context carried by process/start and fs/* params). It
// knows no session, transport or dispatch.
//
// # Contract
//
//   - Method names (methods.go) and params/result types, one file per method family
//     (process.go, fs.go, http.go, environment.go, session.go); our negotiated extensions
//     are in extensions.go, each used only when the peer advertised it
//     (docs/protocol-extensions.md).
//   - Decoding convention (jsonwire.UnmarshalParams, serde semantics): a non-pointer
//     field without omitempty is required; a pointer field is an Option (absent or null →
//     nil); a non-pointer field with omitempty has a serde default (absent → zero value,
//     null → error). Unknown members are ignored. rustnames.go gives the Rust type names
//     that appear in serde's error texts.
//   - Encoding: hot results and notifications (process/read, process/output, fs reads,
//     fs/walk, http bodyDelta) have hand-written AppendJSON methods (jsonrpc.AppendJSONer)
//     that are byte-identical to encoding/json's output and escape strings as serde_json
//     does; tests pin both.
//   - fs/writeBlock's chunk (block_chunk.go) decodes into pooled storage; the server may
//     decode it while the request still arrives (writeblock_arrival.go:
//     WriteBlockArrival, a jsonrpc.Arrival by shape, and WithEarly, through which the
//     params take that decode only for the very string it was made from).
//   - PathURI (pathuri.go, pathuri_parse.go, pathuri_host.go): decoding parses with the
//     WHATWG rules the reference's rust-url applies, rejects what it rejects with its
//     texts (PathURIError), and yields a canonical form; Native converts to a lexically
//     clean host path (InvalidPathError for a foreign-OS URI); FromNative goes back byte
//     for byte as the reference does, with the opaque fallback for paths no URI can name.
//
// # Limits
//
// None of its own: sizes are bounded by the JSON-RPC message limits (jsonwire) and by
// each method's limits.go (executor/process, fs, httpreq).
//
// # Concurrency
//
// The package has no behaviour beyond encoding, decoding and validation; its values are
// plain data, its functions are safe for concurrent use (a WriteBlockArrival serves one
// read loop), and it starts no goroutines.
package protocol
