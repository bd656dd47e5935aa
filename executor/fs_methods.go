package executor

import (
	"context"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/executor/protocol"
)

func init() {
	ord := jsonrpc.LaneOrdinary
	register(protocol.MethodFsReadFile, bind(familyFilesystem, ord, func(ctx context.Context, c *conn, p *protocol.FsReadFileParams) (any, error) {
		return c.srv.fs.ReadFile(ctx, p)
	}))
	register(protocol.MethodFsWriteFile, bind(familyFilesystem, ord, func(ctx context.Context, c *conn, p *protocol.FsWriteFileParams) (any, error) {
		return c.srv.fs.WriteFile(ctx, p)
	}))
	register(protocol.MethodFsCreateDirectory, bind(familyFilesystem, ord, func(ctx context.Context, c *conn, p *protocol.FsCreateDirectoryParams) (any, error) {
		return c.srv.fs.CreateDirectory(ctx, p)
	}))
	register(protocol.MethodFsGetMetadata, bind(familyFilesystem, ord, func(ctx context.Context, c *conn, p *protocol.FsGetMetadataParams) (any, error) {
		return c.srv.fs.GetMetadata(ctx, p)
	}))
	register(protocol.MethodFsCanonicalize, bind(familyFilesystem, ord, func(ctx context.Context, c *conn, p *protocol.FsCanonicalizeParams) (any, error) {
		return c.srv.fs.Canonicalize(ctx, p)
	}))
	register(protocol.MethodFsReadDirectory, bind(familyFilesystem, ord, func(ctx context.Context, c *conn, p *protocol.FsReadDirectoryParams) (any, error) {
		return c.srv.fs.ReadDirectory(ctx, p)
	}))
	register(protocol.MethodFsWalk, bind(familyFilesystem, ord, func(ctx context.Context, c *conn, p *protocol.FsWalkParams) (any, error) {
		return c.srv.fs.Walk(ctx, p)
	}))
	register(protocol.MethodFsRemove, bind(familyFilesystem, ord, func(ctx context.Context, c *conn, p *protocol.FsRemoveParams) (any, error) {
		return c.srv.fs.Remove(ctx, p)
	}))
	register(protocol.MethodFsCopy, bind(familyFilesystem, ord, func(ctx context.Context, c *conn, p *protocol.FsCopyParams) (any, error) {
		return c.srv.fs.Copy(ctx, p)
	}))
	register(protocol.MethodFsOpen, bind(familyFilesystem, ord, func(ctx context.Context, c *conn, p *protocol.FsOpenParams) (any, error) {
		return c.res.fsHandles.Open(ctx, p)
	}))
	register(protocol.MethodFsReadBlock, bind(familyFilesystem, ord, func(ctx context.Context, c *conn, p *protocol.FsReadBlockParams) (any, error) {
		return c.res.fsHandles.ReadBlock(ctx, p)
	}))
	register(protocol.MethodFsWriteBlock, bind(familyFilesystem, ord, func(ctx context.Context, c *conn, p *protocol.FsWriteBlockParams) (any, error) {
		return c.res.fsHandles.WriteBlock(ctx, p)
	}))
	register(protocol.MethodFsWatchMissing, bind(familyFilesystem, ord, func(ctx context.Context, c *conn, p *protocol.FsWatchMissingParams) (any, error) {
		return c.res.watch.Watch(ctx, p)
	}))
	register(protocol.MethodFsClose, bind(familyFilesystem, jsonrpc.LaneControl, func(ctx context.Context, c *conn, p *protocol.FsCloseParams) (any, error) {
		return c.res.fsHandles.Close(ctx, p)
	}))
}
