package executor

import (
	"context"

	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/executor/protocol"
)

// fs/* handlers (routed in methods.go). The stateless operations go to the fs service
// (onFS); handles (onHandles) and watches are the connection's.

// onFS serves a request with a method of the executor's fs.Service.
func onFS[P, R any](f func(*fs.Service, context.Context, *P) (*R, error)) func(context.Context, *conn, *P) (any, error) {
	return func(ctx context.Context, c *conn, p *P) (any, error) { return f(c.srv.fs, ctx, p) }
}

// onHandles serves a request with a method of the connection's fs handles.
func onHandles[P, R any](f func(*fs.Handles, context.Context, *P) (*R, error)) func(context.Context, *conn, *P) (any, error) {
	return func(ctx context.Context, c *conn, p *P) (any, error) { return f(c.res.fsHandles, ctx, p) }
}

func fsWatchMissing(ctx context.Context, c *conn, p *protocol.FsWatchMissingParams) (any, error) {
	return c.res.watch.Watch(ctx, p)
}
