package fs

import (
	"context"
	"errors"
	"os"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/internal/oserr"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox"
)

// Options configure a Service. Nil means defaults; the struct is never mutated.
type Options struct {
	// Sandbox launches the sandboxed helper for requests whose sandbox needs it
	// (spec/sandbox.md §4). Nil: such requests fail closed with -32602; requests whose
	// sandbox runs in-process are served either way.
	Sandbox *sandbox.Launcher
	// Cwd is the executor's cwd, the policy cwd of a context without one. Default:
	// os.Getwd.
	Cwd string
	// Home anchors "~/" deny globs when the context has no userHomeDir. Default: $HOME.
	Home string
	// TmpDir is the executor's TMPDIR: it resolves `tmpdir` entries and is passed to the
	// helper. Default: $TMPDIR ("" = unset).
	TmpDir string
	// RuntimeReadGrants are files the helper's stages need readable besides the executor
	// binary (a dynamically linked binary's loader and libraries). Default none.
	RuntimeReadGrants []string
	// Path is the PATH the helper gets (its whole environment is PATH plus TMPDIR).
	// Default: $PATH.
	Path string
}

// withDefaults fills unset fields from the executor's own process state.
func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Cwd == "" {
		c.Cwd, _ = os.Getwd()
	}
	if c.Home == "" {
		c.Home = os.Getenv("HOME")
	}
	if c.TmpDir == "" {
		c.TmpDir = os.Getenv("TMPDIR")
	}
	if c.Path == "" {
		c.Path = os.Getenv("PATH")
	}
	return c
}

// Service implements the stateless fs/* methods. It is safe for concurrent use.
type Service struct {
	opts Options
}

// New returns a Service. It starts nothing.
func New(opts *Options) *Service {
	return &Service{opts: opts.withDefaults()}
}

// nativePath converts a request path; a foreign or invalid URI is -32600 with the
// reference's text.
func nativePath(p protocol.PathURI) (string, error) {
	native, err := p.Native()
	if err != nil {
		return "", jsonwire.InvalidRequest("%s", err.Error())
	}
	return native, nil
}

// rpcError maps any error to the wire error.
func rpcError(err error) error {
	if err == nil {
		return nil
	}
	var rpc *jsonwire.Error
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
		return jsonwire.Internal("%s", err.Error())
	}
	return nil
}
