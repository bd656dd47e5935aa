// Package jsonwire is the JSON vocabulary every speaker of the exec-server protocol
// shares: decoding that behaves byte for byte like the reference's serde_json, the
// JSON-RPC error codes and error type, and the base64 of byte strings. It is a leaf: it
// imports no project package (test/deps_test.go enforces that), only the standard library
// and, for encoding base64 alone, github.com/segmentio/asm/base64 (AVX2; see AppendBase64
// for why).
//
// # Why a package of its own, at the top of the tree
//
// The server (executor/jsonrpc, executor/protocol and the method packages), the harness
// SDK and the sandbox policy all need the same codes, the same error texts and the same
// base64 rules; before this package each kept a copy, and the copies drifted. Placing it
// under executor/ would have made the harness link the server's dispatcher and the
// sandbox import the executor tree, both against the layering of docs/architecture.md.
// So it sits beside them, below all three, and knows none of them.
//
// # Layers
//
// Above: executor/jsonrpc (envelope, lanes, dispatch: it walks the envelope with
// ScanRoot, Classify, RequestID, String and Decode), executor/protocol (params types built
// from Bytes, Unit, Enum, RustNamed; AppendSerdeString in its hand-written encoders), the
// method packages (UnmarshalParams, the error constructors), harness (the same scanner
// and classification for what it reads: ScanRootUnbudgeted, Classify, ObjectMembers,
// String; codes; base64 of output chunks) and sandbox/policy (codes). One scanner and one
// classification serve both ends (message.go).
// Below: the standard library, and segmentio/asm's base64 encoder (AppendBase64). It
// knows no JSON-RPC envelope, no method and no transport; encoding outbound messages is
// executor/jsonrpc's.
//
// # Contract: serde_json's behaviour and texts
//
// What the reference accepts, this package accepts; what it rejects, this package
// rejects with the reference's detail text, positioned where serde_json positions it
// (observed from codex 0.169.0 and 0.171.0, pinned by the differential tests in
// executor/jsonrpc that run the released binaries):
//
//   - Validate / ScanRoot (scan.go, scan_token.go): one left-to-right pass with an
//     explicit stack checks syntax ("expected ident at line 1 column 2"), the value
//     budget, duplicate keys ("duplicate JSON object key `k`") and nesting; errors are
//     *SyntaxError. Strings are checked for UTF-8 only when they close, as serde_json
//     does.
//   - UnmarshalParams / Decode (params.go, typedec.go, structdec.go, serde.go): typed
//     decoding with serde's derive semantics, driven by the Go declaration (the mapping
//     table is in typedec.go, struct rules in structdec.go), with serde's wording:
//     "invalid type: map, expected a string", "missing field `x`", "unknown variant
//     `v`, expected `a` or `b`", "invalid length n, expected …", "invalid number".
//     UnmarshalParams returns *Error with CodeInvalidParams (or the *Error a custom
//     json.Unmarshaler returned) and retries {} as null, as the reference does for
//     params.
//   - RequestID (value.go): the reference's untagged RequestId (i64 | String), echoed in
//     serde_json's canonical form.
//   - AppendSerdeString (serde.go): a string as serde_json writes it (only '"', '\\' and
//     C0 controls escaped); RequestID's re-escape and executor/protocol's hand-written
//     encoders share it.
//   - DecodeBase64 / DecodeBase64Into (base64.go): standard alphabet, canonical padding,
//     no whitespace or line breaks (the stdlib's decoder skips '\r' and '\n'; the
//     reference rejects them, so they never reach the fast path), and the base64
//     crate's error texts ("Invalid symbol 10, offset 4."). This is the module's one
//     decoder of wire base64 and it has one fast path: the stdlib's strict decoder for
//     input without line breaks; only failures run the slower check that names the
//     error.
//   - Error (errors.go): {"code","message","data"?}; the code table of spec/jsonrpc.md §7
//     is defined here and nowhere else. Handlers return *Error to choose a code; any
//     other error reaching the RPC boundary is sent as CodeInternal.
//
// # Limits (limits.go)
//
// Wire, fixed by the reference: MaxValues (262,144 JSON values per message, root and
// containers counted, keys not) and MaxDepth (128: the 128th nested container fails
// with "recursion limit exceeded"). Implementation: objects with more than 16 keys
// switch the duplicate check from a linear scan to a set. Known differences: Rust's
// Debug escaping of non-printable characters in "invalid type: string …" follows Go's
// Unicode tables, which may differ from Rust's for characters assigned in newer
// Unicode versions; numbers are never converted beyond what a field's type needs.
//
// # Concurrency and allocation
//
// Every function is safe for concurrent use; nothing retains its input (decoded
// json.RawMessage fields are copies). Decoders are compiled once per Go type and cached.
// ScanRoot and Validate reuse pooled scanners and do not allocate unless an object has
// more than 16 keys (the duplicate set) or a key has escapes; a pathological message's
// scanner is dropped instead of pooled. The package starts no
// goroutines.
package jsonwire
