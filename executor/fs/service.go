package fs

import (
	"context"
	"errors"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/executor/oserr"
	"github.com/execlab/executor/executor/protocol"
)

// Options configure a Service. Nil means defaults; the struct is never mutated.
type Options struct{}

// Service implements the stateless fs/* methods. It is safe for concurrent use.
type Service struct {
	opts Options
}

// New returns a Service.
func New(opts *Options) *Service {
	s := &Service{}
	if opts != nil {
		s.opts = *opts
	}
	return s
}

// nativePath converts a request path; a foreign or invalid URI is -32600 with the
// reference's text.
func nativePath(p protocol.PathURI) (string, error) {
	native, err := p.Native()
	if err != nil {
		return "", jsonrpc.InvalidRequest("%s", err.Error())
	}
	return native, nil
}

// rpcError maps any error to the wire error.
func rpcError(err error) error {
	if err == nil {
		return nil
	}
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return rpc
	}
	return oserr.ToRPC(err)
}

// follow returns the followSymlinks value (default true).
func follow(b *bool) bool { return b == nil || *b }

// orTrue returns a defaulted-true option.
func orTrue(b *bool) bool { return b == nil || *b }

// ctxErr returns an error when ctx is done; long operations poll it between entries.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return jsonrpc.Internal("%s", err.Error())
	}
	return nil
}
