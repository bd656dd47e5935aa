package fs_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// Deny globs are expanded when the helper's sandbox is built, down to
// glob_scan_max_depth; the helper re-checks them on reads, so a matching file the
// expansion did not reach (deeper than the cap, or created after launch) is refused
// like a masked one: -32600 "Permission denied (os error 13)".
func TestSandboxedHelper_RechecksDenyGlobs(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	s := fs.New(&fs.Options{Sandbox: l})
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a/b"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"top.env", "a/b/deep.env", "a/b/ok.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("v"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "a/b/deep.env"), filepath.Join(dir, "alias.txt")); err != nil {
		t.Fatal(err)
	}
	sb := sandboxtest.Context(t, `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","glob_scan_max_depth":1,"entries":[
		{"path":{"type":"special","value":{"kind":"minimal"}},"access":"read"},
		{"path":{"type":"path","path":"`+string(uri(dir))+`"},"access":"read"},
		{"path":{"type":"glob_pattern","pattern":"`+dir+`/**/*.env"},"access":"deny"}]}},"windowsSandboxLevel":"disabled"}`)
	ctx := context.Background()
	read := func(p string) error {
		_, err := s.ReadFile(ctx, &protocol.FsReadFileParams{Path: uri(filepath.Join(dir, p)), Sandbox: sb})
		return err
	}
	const denied = "Permission denied (os error 13)"
	wantErr(t, "masked at launch", read("top.env"), jsonwire.CodeInvalidRequest, denied)
	wantErr(t, "deeper than the scan cap", read("a/b/deep.env"), jsonwire.CodeInvalidRequest, denied)
	wantErr(t, "symlink to a denied file", read("alias.txt"), jsonwire.CodeInvalidRequest, denied)
	if err := read("a/b/ok.txt"); err != nil {
		t.Errorf("non-matching file: got %v, want it readable", err)
	}
	_, err := s.ReadDirectory(ctx, &protocol.FsReadDirectoryParams{Path: uri(filepath.Join(dir, "a/b")), Sandbox: sb})
	if err != nil {
		t.Errorf("listing a directory holding a denied file: got %v, want a listing", err)
	}
}
