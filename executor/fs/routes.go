package fs

import (
	"context"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/sandbox/policy"
)

// The routed fs/* methods of the Service in one place: each hands its request to routed
// (sandbox.go), which sends it to the sandboxed helper when its sandbox context asks for
// one, or runs its implementation in this process (the lower-case method, in the file
// named after the method). The readOnly argument is sandboxFor's (true for fs/readFile
// and fs/getMetadata). fs/open and the fs/writeBlock replace use the helper their own way
// (handles.go, write_block.go).

// Canonicalize implements fs/canonicalize: every symlink and alias resolved, like realpath(3)
// (missing path → -32004, link loop → "Symbolic link loop (os error 40)").
func (s *Service) Canonicalize(ctx context.Context, p *protocol.FsCanonicalizeParams) (*protocol.FsCanonicalizeResult, error) {
	return routed(ctx, s, protocol.MethodFsCanonicalize, false, p, func(p *protocol.FsCanonicalizeParams) **policy.Context { return &p.Sandbox }, s.canonicalize)
}

// Copy implements fs/copy: a file, a symlink (recreated with the same target text, also at top
// level) or, with recursive:true, a directory tree in which special files are skipped.
func (s *Service) Copy(ctx context.Context, p *protocol.FsCopyParams) (*protocol.FsEmptyResult, error) {
	return routed(ctx, s, protocol.MethodFsCopy, false, p, func(p *protocol.FsCopyParams) **policy.Context { return &p.Sandbox }, s.copy)
}

// CreateDirectory implements fs/createDirectory; recursive (default true) creates missing
// parents like Rust's create_dir_all: an existing directory is fine, an existing
// non-directory is "File exists".
func (s *Service) CreateDirectory(ctx context.Context, p *protocol.FsCreateDirectoryParams) (*protocol.FsEmptyResult, error) {
	return routed(ctx, s, protocol.MethodFsCreateDirectory, false, p, func(p *protocol.FsCreateDirectoryParams) **policy.Context { return &p.Sandbox }, s.createDirectory)
}

// GetMetadata implements fs/getMetadata. Following (default): isDirectory/isFile describe
// the target, isSymlink the path itself, createdAtMs is 0 (as the Linux reference build
// reports). Not following: a symlink final component is -32600, and createdAtMs is the
// statx birth time when the filesystem records one.
func (s *Service) GetMetadata(ctx context.Context, p *protocol.FsGetMetadataParams) (*protocol.FsGetMetadataResult, error) {
	return routed(ctx, s, protocol.MethodFsGetMetadata, true, p, func(p *protocol.FsGetMetadataParams) **policy.Context { return &p.Sandbox }, s.getMetadata)
}

// ReadDirectory implements fs/readDirectory: entries sorted by name (the reference uses raw
// directory order), symlinks resolved, dangling links and loops left out, special files
// listed with both flags false, names converted lossily to UTF-8.
func (s *Service) ReadDirectory(ctx context.Context, p *protocol.FsReadDirectoryParams) (*protocol.FsReadDirectoryResult, error) {
	return routed(ctx, s, protocol.MethodFsReadDirectory, false, p, func(p *protocol.FsReadDirectoryParams) **policy.Context { return &p.Sandbox }, s.readDirectory)
}

// ReadFile implements fs/readFile: the whole file, or at most maxBytes when present (a
// documented deviation: 0.169.0 ignores maxBytes).
func (s *Service) ReadFile(ctx context.Context, p *protocol.FsReadFileParams) (*protocol.FsReadFileResult, error) {
	return routed(ctx, s, protocol.MethodFsReadFile, true, p, func(p *protocol.FsReadFileParams) **policy.Context { return &p.Sandbox }, s.readFile)
}

// Remove implements fs/remove. recursive and force default to true. A symlink is removed,
// never its target. force turns a missing path (also a missing parent) into success; a
// parent that is a file is still an error, -32603 "Not a directory" (observed from codex
// 0.169.0, contrary to an earlier reading of the spec). recursive:false removes files, symlinks and empty directories only.
func (s *Service) Remove(ctx context.Context, p *protocol.FsRemoveParams) (*protocol.FsEmptyResult, error) {
	return routed(ctx, s, protocol.MethodFsRemove, false, p, func(p *protocol.FsRemoveParams) **policy.Context { return &p.Sandbox }, s.remove)
}

// Walk implements fs/walk: breadth-first from the root (depth 0), each directory's entries
// sorted by name. Every entry and per-entry error counts against maxEntries; reaching it, or the estimated 4 MiB
// response budget, sets truncated and stops; reaching maxDirectories sets truncated and stops
// descending. Symlinks are skipped unless they lead to a directory and following is on;
// such links are always listed but a directory already visited (by canonical path) is not
// descended again; other special files are skipped. Per-entry failures go
// to errors. Entry URIs are built from lossy names with tabs dropped, as the reference does
// (spec/jsonrpc.md §4), so such an entry lands in errors.
func (s *Service) Walk(ctx context.Context, p *protocol.FsWalkParams) (*protocol.FsWalkResult, error) {
	return routed(ctx, s, protocol.MethodFsWalk, false, p, func(p *protocol.FsWalkParams) **policy.Context { return &p.Sandbox }, s.walk)
}

// WriteFile implements fs/writeFile: create or truncate in place (an existing hard link keeps
// its inode); parents are never created (missing parent → -32004).
func (s *Service) WriteFile(ctx context.Context, p *protocol.FsWriteFileParams) (*protocol.FsEmptyResult, error) {
	return routed(ctx, s, protocol.MethodFsWriteFile, false, p, func(p *protocol.FsWriteFileParams) **policy.Context { return &p.Sandbox }, s.writeFile)
}
