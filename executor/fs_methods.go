package executor

import (
	"context"

	"github.com/execlab/executor/executor/protocol"
)

// fs/* handlers (routed in methods.go). The stateless operations go to the fs service;
// handles and watches are the connection's.

func fsReadFile(ctx context.Context, c *conn, p *protocol.FsReadFileParams) (any, error) {
	return c.srv.fs.ReadFile(ctx, p)
}

func fsWriteFile(ctx context.Context, c *conn, p *protocol.FsWriteFileParams) (any, error) {
	return c.srv.fs.WriteFile(ctx, p)
}

func fsCreateDirectory(ctx context.Context, c *conn, p *protocol.FsCreateDirectoryParams) (any, error) {
	return c.srv.fs.CreateDirectory(ctx, p)
}

func fsGetMetadata(ctx context.Context, c *conn, p *protocol.FsGetMetadataParams) (any, error) {
	return c.srv.fs.GetMetadata(ctx, p)
}

func fsCanonicalize(ctx context.Context, c *conn, p *protocol.FsCanonicalizeParams) (any, error) {
	return c.srv.fs.Canonicalize(ctx, p)
}

func fsReadDirectory(ctx context.Context, c *conn, p *protocol.FsReadDirectoryParams) (any, error) {
	return c.srv.fs.ReadDirectory(ctx, p)
}

func fsWalk(ctx context.Context, c *conn, p *protocol.FsWalkParams) (any, error) {
	return c.srv.fs.Walk(ctx, p)
}

func fsRemove(ctx context.Context, c *conn, p *protocol.FsRemoveParams) (any, error) {
	return c.srv.fs.Remove(ctx, p)
}

func fsCopy(ctx context.Context, c *conn, p *protocol.FsCopyParams) (any, error) {
	return c.srv.fs.Copy(ctx, p)
}

func fsOpen(ctx context.Context, c *conn, p *protocol.FsOpenParams) (any, error) {
	return c.res.fsHandles.Open(ctx, p)
}

func fsReadBlock(ctx context.Context, c *conn, p *protocol.FsReadBlockParams) (any, error) {
	return c.res.fsHandles.ReadBlock(ctx, p)
}

func fsWriteBlock(ctx context.Context, c *conn, p *protocol.FsWriteBlockParams) (any, error) {
	return c.res.fsHandles.WriteBlock(ctx, p)
}

func fsWatchMissing(ctx context.Context, c *conn, p *protocol.FsWatchMissingParams) (any, error) {
	return c.res.watch.Watch(ctx, p)
}

func fsClose(ctx context.Context, c *conn, p *protocol.FsCloseParams) (any, error) {
	return c.res.fsHandles.Close(ctx, p)
}
