package oserr

import (
	"errors"
	"strconv"
	"syscall"

	"github.com/execlab/executor/jsonwire"
)

// Errno returns the errno inside err, if any.
func Errno(err error) (syscall.Errno, bool) {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e, true
	}
	return 0, false
}

// ErrnoText renders an errno as the reference does: "<strerror> (os error <n>)".
func ErrnoText(e syscall.Errno) string {
	msg, ok := strerror[e]
	if !ok {
		msg = "Unknown error " + strconv.Itoa(int(e))
	}
	return msg + " (os error " + strconv.Itoa(int(e)) + ")"
}

// Text renders err for the wire: the errno form when err wraps an errno, else err's own
// text.
func Text(err error) string {
	if e, ok := Errno(err); ok {
		return ErrnoText(e)
	}
	return err.Error()
}

// Kind classifies an error like Rust's io::ErrorKind, as far as the wire mapping needs.
type Kind uint8

const (
	KindOther Kind = iota
	KindNotFound
	KindPermissionDenied
	KindInvalidInput
)

// KindOf classifies err by its errno.
func KindOf(err error) Kind {
	e, ok := Errno(err)
	if !ok {
		return KindOther
	}
	switch e {
	case syscall.ENOENT:
		return KindNotFound
	case syscall.EACCES, syscall.EPERM:
		return KindPermissionDenied
	case syscall.EINVAL:
		return KindInvalidInput
	}
	return KindOther
}

// ToRPC maps a filesystem error to its JSON-RPC error (spec/jsonrpc.md §7): NotFound →
// -32004, InvalidInput or PermissionDenied → -32600, else -32603; the message is Text(err).
// A *jsonwire.Error inside err is returned as is.
func ToRPC(err error) *jsonwire.Error {
	var rpcErr *jsonwire.Error
	if errors.As(err, &rpcErr) {
		return rpcErr
	}
	msg := Text(err)
	switch KindOf(err) {
	case KindNotFound:
		return &jsonwire.Error{Code: jsonwire.CodeNotFound, Message: msg}
	case KindPermissionDenied, KindInvalidInput:
		return &jsonwire.Error{Code: jsonwire.CodeInvalidRequest, Message: msg}
	}
	return &jsonwire.Error{Code: jsonwire.CodeInternal, Message: msg}
}
