// Package oserr renders operating-system errors the way the reference executor does on
// the wire and maps them to JSON-RPC error codes.
//
// # Layers
//
// Above: executor/fs and executor/process (filesystem and spawn failures) and
// internal/wsauth (unreadable token files, in the reference's words). Below: syscall's
// errno values and jsonwire's Error and codes. It knows nothing of methods, params or
// sessions: callers add their own prefixes ("failed to read …: ") around Text.
//
// # Contract
//
// The reference is a Rust binary linked against musl, so an errno is shown as
// "<musl strerror text> (os error <n>)", e.g. "Symbolic link loop (os error 40)"
// (ErrnoText, Text). Go's own errno strings are lower-case glibc wordings and never
// match; clients match substrings such as "Permission denied" and "No such file or
// directory". An error without an errno keeps its own text.
//
// KindOf classifies an error as Rust's io::ErrorKind does, as far as the wire needs:
// ENOENT → NotFound; EACCES, EPERM → PermissionDenied; EINVAL → InvalidInput; the rest
// Other. ToRPC maps it (spec/jsonrpc.md §7): NotFound → -32004; InvalidInput or
// PermissionDenied → -32600; anything else → -32603; a *jsonwire.Error already inside
// the chain is returned unchanged, so a layer that chose its code keeps it.
//
// # Limits
//
// The message table (strerror_linux.go) is musl's for Linux errno values, a fact of the
// C library the reference links against; an errno missing from it renders as
// "Unknown error <n> (os error <n>)". The table exists for Linux only, the one host OS
// the executor serves.
//
// # Concurrency
//
// The package is pure: no state beyond the read-only table, safe for concurrent use,
// no goroutines.
package oserr
