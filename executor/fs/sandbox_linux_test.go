package fs_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/policy"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// readList: only the platform roots and dir readable (not fullRead: every operation
// goes through the helper).
func readList(t *testing.T, dir string) *policy.Context {
	return sandboxtest.Context(t, `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[
		{"path":{"type":"special","value":{"kind":"minimal"}},"access":"read"},
		{"path":{"type":"path","path":"`+string(uri(dir))+`"},"access":"read"}]}},"windowsSandboxLevel":"disabled"}`)
}

func TestSandboxedHelper_Bubblewrap(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	s := fs.New(&fs.Options{Sandbox: l})
	ws, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("top secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(ws, "escape")); err != nil {
		t.Fatal(err)
	}
	wsw, ro := sandboxtest.WorkspaceWrite(t, ws), readList(t, ws)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

	// Writes inside the workspace go through the helper and land on the host.
	if _, err := s.WriteFile(ctx, &protocol.FsWriteFileParams{Path: uri(filepath.Join(ws, "a.txt")), DataBase64: b64("hello"), Sandbox: wsw}); err != nil {
		t.Fatalf("writeFile inside the workspace: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "a.txt")); err != nil || string(b) != "hello" {
		t.Fatalf("got %q %v on the host, want \"hello\"", b, err)
	}
	// Writes outside are refused by the kernel inside the helper.
	_, err := s.WriteFile(ctx, &protocol.FsWriteFileParams{Path: uri(filepath.Join(outside, "x")), DataBase64: b64("x"), Sandbox: wsw})
	wantErr(t, "writeFile outside", err, jsonwire.CodeInternal, "Read-only file system (os error 30)")
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Fatal("a sandboxed writeFile created a file outside the workspace")
	}
	// Protected metadata inside a writable root stays read-only.
	_, err = s.CreateDirectory(ctx, &protocol.FsCreateDirectoryParams{Path: uri(filepath.Join(ws, ".git", "hooks")), Sandbox: wsw})
	wantErr(t, "createDirectory .git", err, jsonwire.CodeInternal, "Read-only file system (os error 30)")
	if _, err := s.CreateDirectory(ctx, &protocol.FsCreateDirectoryParams{Path: uri(filepath.Join(ws, "d", "e")), Sandbox: wsw}); err != nil {
		t.Fatalf("createDirectory: %v", err)
	}
	if _, err := s.Copy(ctx, &protocol.FsCopyParams{SourcePath: uri(filepath.Join(ws, "a.txt")), DestinationPath: uri(filepath.Join(ws, "d", "b.txt")), Sandbox: wsw}); err != nil {
		t.Fatalf("copy: %v", err)
	}
	_, err = s.Copy(ctx, &protocol.FsCopyParams{SourcePath: uri(filepath.Join(ws, "a.txt")), DestinationPath: uri(filepath.Join(outside, "c.txt")), Sandbox: wsw})
	wantErr(t, "copy outside", err, jsonwire.CodeInternal, "Read-only file system (os error 30)")

	// A read-list profile runs reads in the helper: the workspace is visible, the rest
	// of the host is not, and a symlink out of the workspace does not escape.
	got, err := s.ReadFile(ctx, &protocol.FsReadFileParams{Path: uri(filepath.Join(ws, "a.txt")), Sandbox: ro})
	if err != nil || string(got.DataBase64) != "hello" {
		t.Fatalf("readFile inside: got %+v %v, want hello", got, err)
	}
	_, err = s.ReadFile(ctx, &protocol.FsReadFileParams{Path: uri(secret), Sandbox: ro})
	wantErr(t, "readFile outside", err, jsonwire.CodeNotFound, "No such file or directory (os error 2)")
	_, err = s.ReadFile(ctx, &protocol.FsReadFileParams{Path: uri(filepath.Join(ws, "escape")), Sandbox: ro})
	wantErr(t, "readFile through a symlink", err, jsonwire.CodeNotFound, "No such file or directory (os error 2)")
	_, err = s.WriteFile(ctx, &protocol.FsWriteFileParams{Path: uri(filepath.Join(ws, "a.txt")), DataBase64: b64("x"), Sandbox: ro})
	wantErr(t, "writeFile under read", err, jsonwire.CodeInternal, "Read-only file system (os error 30)")
	md, err := s.GetMetadata(ctx, &protocol.FsGetMetadataParams{Path: uri(filepath.Join(ws, "a.txt")), Sandbox: ro})
	if err != nil || !md.IsFile || md.Size != 5 {
		t.Fatalf("getMetadata: got %+v %v, want a 5-byte file", md, err)
	}
	dir, err := s.ReadDirectory(ctx, &protocol.FsReadDirectoryParams{Path: uri(ws), Sandbox: ro})
	if err != nil || len(dir.Entries) < 2 {
		t.Fatalf("readDirectory: got %+v %v", dir, err)
	}
	walk, err := s.Walk(ctx, &protocol.FsWalkParams{Path: uri(ws), Options: protocol.FsWalkOptions{MaxDepth: 4, MaxDirectories: 10, MaxEntries: 100}, Sandbox: ro})
	if err != nil || len(walk.Entries) < 3 {
		t.Fatalf("walk: got %+v %v", walk, err)
	}
	can, err := s.Canonicalize(ctx, &protocol.FsCanonicalizeParams{Path: uri(filepath.Join(ws, "d", "..", "a.txt")), Sandbox: ro})
	if err != nil || can.Path != uri(filepath.Join(ws, "a.txt")) {
		t.Fatalf("canonicalize: got %+v %v", can, err)
	}
	if _, err := s.Remove(ctx, &protocol.FsRemoveParams{Path: uri(filepath.Join(ws, "d")), Sandbox: wsw}); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "d")); !os.IsNotExist(err) {
		t.Fatalf("removed directory still exists: %v", err)
	}
}

func TestSandboxedOpen_Snapshot(t *testing.T) {
	l := sandboxtest.Launcher(t, sandbox.BackendBubblewrap)
	s := fs.New(&fs.Options{Sandbox: l})
	h := s.NewHandles()
	defer h.CloseAll()
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "f"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "s"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	ro := readList(t, ws)
	if _, err := h.Open(ctx, &protocol.FsOpenParams{HandleID: "a", Path: uri(filepath.Join(ws, "f")), Sandbox: ro}); err != nil {
		t.Fatalf("open: %v", err)
	}
	// The snapshot is what was read at open time.
	if err := os.WriteFile(filepath.Join(ws, "f"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		off, n uint64
		want   string
		eof    bool
	}{{0, 4, "0123", false}, {8, 4, "89", true}, {6, 4, "6789", false}, {20, 4, "", true}} {
		if got, eof := readBlock(t, h, "a", tt.off, tt.n); got != tt.want || eof != tt.eof {
			t.Errorf("readBlock(%d,%d): got %q eof %v, want %q %v", tt.off, tt.n, got, eof, tt.want, tt.eof)
		}
	}
	_, err := h.Open(ctx, &protocol.FsOpenParams{HandleID: "b", Path: uri(filepath.Join(outside, "s")), Sandbox: ro})
	wantErr(t, "open outside", err, jsonwire.CodeNotFound, "No such file or directory (os error 2)")
	_, err = h.Open(ctx, &protocol.FsOpenParams{HandleID: "c", Path: uri(ws), Sandbox: ro})
	wantErr(t, "open a directory", err, jsonwire.CodeInvalidRequest, "path `"+ws+"` is not a file")

	// The per-connection budget: two 40 MiB snapshots do not fit, closing frees it.
	big := filepath.Join(ws, "big")
	if err := os.Truncate(filepath.Join(ws, "f"), 0); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(40 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := h.Open(ctx, &protocol.FsOpenParams{HandleID: "big1", Path: uri(big), Sandbox: ro}); err != nil {
		t.Fatalf("open 40 MiB: %v", err)
	}
	_, err = h.Open(ctx, &protocol.FsOpenParams{HandleID: "big2", Path: uri(big), Sandbox: ro})
	wantErr(t, "over budget", err, jsonwire.CodeInvalidRequest, "sandboxed file reads may hold at most 64 MiB per connection")
	if _, err := h.Close(ctx, &protocol.FsCloseParams{HandleID: "big1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Open(ctx, &protocol.FsOpenParams{HandleID: "big2", Path: uri(big), Sandbox: ro}); err != nil {
		t.Fatalf("open after close: %v", err)
	}
}

func TestSandbox_ResolutionErrors(t *testing.T) {
	s := fs.New(&fs.Options{Sandbox: sandboxtest.Launcher(t, sandbox.BackendBubblewrap)})
	dir := t.TempDir()
	noCwd := sandboxtest.Context(t, `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[
		{"path":{"type":"special","value":{"kind":"project_roots"}},"access":"write"}]}},"windowsSandboxLevel":"disabled"}`)
	_, err := s.ReadFile(ctx, &protocol.FsReadFileParams{Path: uri(dir), Sandbox: noCwd})
	wantErr(t, "dynamic without cwd", err, jsonwire.CodeInvalidParams, "file system sandbox context with dynamic permissions requires cwd")
	foreign := sandboxtest.Context(t, `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[
		{"path":{"type":"path","path":"file://server/share"},"access":"read"}]}},"windowsSandboxLevel":"disabled"}`)
	_, err = s.ReadFile(ctx, &protocol.FsReadFileParams{Path: uri(dir), Sandbox: foreign})
	wantErr(t, "foreign path", err, jsonwire.CodeInvalidRequest, "invalid sandbox permission path URI: 'file://server/share' is invalid on 'linux'")

	// Observed from codex 0.171.0: the rest of the context is converted only when the
	// helper runs; workspace roots and cwd fail with -32600 and no prepare prefix;
	// userHomeDir and temporaryDirectories that do not convert are ignored.
	restricted := `"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[
		{"path":{"type":"special","value":{"kind":"project_roots"}},"access":"write"}]}},"windowsSandboxLevel":"disabled"`
	cases := []struct {
		name, ctx string
		code      int
		msg       string
	}{
		{"foreign root", `{` + restricted + `,"cwd":"` + uri(dir).String() + `","workspaceRoots":["file://server/r"]}`,
			jsonwire.CodeInvalidRequest, "invalid sandbox workspace root: 'file://server/r' is invalid on 'linux'"},
		{"foreign cwd", `{` + restricted + `,"cwd":"file://server/c","workspaceRoots":["file://server/r"]}`,
			jsonwire.CodeInvalidRequest, "'file://server/c' is invalid on 'linux'"},
	}
	for _, tt := range cases {
		_, err = s.ReadFile(ctx, &protocol.FsReadFileParams{Path: uri(dir), Sandbox: sandboxtest.Context(t, tt.ctx)})
		wantErr(t, tt.name, err, tt.code, tt.msg)
	}
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]string{
		"disabled profile, foreign cwd and roots": `{"permissions":{"type":"disabled"},"cwd":"file://server/c","workspaceRoots":["file://server/r"],"windowsSandboxLevel":"disabled"}`,
		"full read, foreign cwd":                  `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"}]}},"cwd":"file://server/c","windowsSandboxLevel":"disabled"}`,
		"foreign home and temporary directories":  `{` + restricted + `,"cwd":"` + uri(dir).String() + `","workspaceRoots":["` + uri(dir).String() + `"],"userHomeDir":"file://server/h","temporaryDirectories":["file://server/t"]}`,
	} {
		res, err := s.ReadFile(ctx, &protocol.FsReadFileParams{Path: uri(f), Sandbox: sandboxtest.Context(t, c)})
		if err != nil || string(res.DataBase64) != "x" {
			t.Errorf("%s: got %+v, %v; want the file read", name, res, err)
		}
	}
}

// The helper reads the platform roots whatever the profile grants (observed from codex
// 0.169.0 and 0.171.0: only project_roots:write, and /etc/hostname reads).
func TestSandboxedHelper_PlatformRootsReadable(t *testing.T) {
	s := fs.New(&fs.Options{Sandbox: sandboxtest.Launcher(t, sandbox.BackendBubblewrap)})
	ws := t.TempDir()
	c := sandboxtest.Context(t, `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[
		{"path":{"type":"special","value":{"kind":"project_roots"}},"access":"write"}]}},"cwd":"`+uri(ws).String()+`","workspaceRoots":["`+uri(ws).String()+`"],"windowsSandboxLevel":"disabled"}`)
	want, err := os.ReadFile("/etc/hostname")
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.ReadFile(ctx, &protocol.FsReadFileParams{Path: uri("/etc/hostname"), Sandbox: c})
	if err != nil || string(res.DataBase64) != string(want) {
		t.Fatalf("fs/readFile /etc/hostname = %+v, %v; want %q", res, err, want)
	}
	// Outside the platform roots stays hidden.
	home, _ := os.UserHomeDir()
	_, err = s.GetMetadata(ctx, &protocol.FsGetMetadataParams{Path: uri(home), Sandbox: c})
	wantErr(t, "home hidden", err, jsonwire.CodeNotFound, "No such file or directory (os error 2)")
}

// Degraded backend (spec/sandbox.md §3.11, §7.2 fs_helper_under_degraded): read-only
// helper operations work; a workspace-write fs/writeFile is refused.
func TestSandboxedHelper_DegradedLandlock(t *testing.T) {
	s := fs.New(&fs.Options{Sandbox: sandboxtest.Launcher(t, sandbox.BackendLandlock)})
	ws, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a"), []byte("A"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "s"), []byte("S"), 0o644); err != nil {
		t.Fatal(err)
	}
	ro := readList(t, ws)
	got, err := s.ReadFile(ctx, &protocol.FsReadFileParams{Path: uri(filepath.Join(ws, "a")), Sandbox: ro})
	if err != nil || string(got.DataBase64) != "A" {
		t.Fatalf("readFile: got %+v %v, want QQ==", got, err)
	}
	_, err = s.ReadFile(ctx, &protocol.FsReadFileParams{Path: uri(filepath.Join(outside, "s")), Sandbox: ro})
	wantErr(t, "readFile outside", err, jsonwire.CodeInvalidRequest, "Permission denied (os error 13)")
	_, err = s.WriteFile(ctx, &protocol.FsWriteFileParams{Path: uri(filepath.Join(ws, "b")), DataBase64: "QQ==", Sandbox: sandboxtest.WorkspaceWrite(t, ws)})
	wantErr(t, "workspace-write", err, jsonwire.CodeInvalidParams, "~sandbox intent cannot be enforced on this executor: degraded Landlock backend cannot express")
	if _, err := os.Stat(filepath.Join(ws, "b")); err == nil {
		t.Fatal("refused writeFile created the file")
	}
}
