package jsonrpc

import "github.com/execlab/executor/jsonwire"

// The wire error codes and the error type live in jsonwire (errors.go there), shared
// with the harness and the sandbox policy. Only the dispatcher's own text is here.

// MethodNotFound returns the reference's error for an unregistered method.
func MethodNotFound(method string) *jsonwire.Error {
	return &jsonwire.Error{Code: jsonwire.CodeMethodNotFound, Message: "exec-server stub does not implement `" + method + "` yet"}
}
