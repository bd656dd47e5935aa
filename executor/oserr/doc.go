// Package oserr renders operating-system errors the way the reference executor does on
// the wire and maps them to JSON-RPC error codes.
//
// The reference is a Rust binary linked against musl, so an errno is shown as
// "<musl strerror text> (os error <n>)", e.g. "Symbolic link loop (os error 40)". Go's
// own errno strings are lower-case glibc wordings and never match; clients match
// substrings such as "Permission denied" and "No such file or directory".
//
// Mapping (spec/jsonrpc.md §7): NotFound → -32004; InvalidInput or PermissionDenied →
// -32600; anything else → -32603.
//
// The package is pure and safe for concurrent use. It knows nothing of methods.
package oserr
