package fs_test

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

var ctx = context.Background()

func uri(p string) protocol.PathURI { return protocol.FromNative(p) }
func ptr[T any](v T) *T             { return &v }

// wantErr checks a *jsonwire.Error code and message (message "" = any; a leading "~" = substring).
func wantErr(t *testing.T, what string, err error, code int, msg string) {
	t.Helper()
	var rpc *jsonwire.Error
	if !errors.As(err, &rpc) {
		t.Fatalf("%s: got error %v, want code %d %q", what, err, code, msg)
	}
	ok := rpc.Code == code
	switch {
	case msg == "":
	case strings.HasPrefix(msg, "~"):
		ok = ok && strings.Contains(rpc.Message, msg[1:])
	default:
		ok = ok && rpc.Message == msg
	}
	if !ok {
		t.Fatalf("%s: got %d %q, want %d %q", what, rpc.Code, rpc.Message, code, msg)
	}
}

func TestWriteReadFile_RoundTrip(t *testing.T) {
	s, dir := fs.New(nil), t.TempDir()
	p := filepath.Join(dir, "f.bin")
	data := []byte{0, 1, 2, 255, 'h', 'i'}
	if _, err := s.WriteFile(ctx, &protocol.FsWriteFileParams{Path: uri(p), DataBase64: base64.StdEncoding.EncodeToString(data)}); err != nil {
		t.Fatal(err)
	}
	res, err := s.ReadFile(ctx, &protocol.FsReadFileParams{Path: uri(p)})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.DataBase64; string(got) != string(data) {
		t.Fatalf("got %q, want %q", got, data)
	}
	res, err = s.ReadFile(ctx, &protocol.FsReadFileParams{Path: uri(p), MaxBytes: ptr(uint64(3))})
	if err != nil || string(res.DataBase64) != string(data[:3]) {
		t.Fatalf("maxBytes 3: got %v %v, want first 3 bytes", res, err)
	}
}

func TestWriteFile_Errors(t *testing.T) {
	s, dir := fs.New(nil), t.TempDir()
	missing := filepath.Join(dir, "nope", "f")
	_, err := s.WriteFile(ctx, &protocol.FsWriteFileParams{Path: uri(missing), DataBase64: ""})
	wantErr(t, "missing parent", err, jsonwire.CodeNotFound, "No such file or directory (os error 2)")
	if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
		t.Fatalf("parent was created: %v", err)
	}
	_, err = s.WriteFile(ctx, &protocol.FsWriteFileParams{Path: uri(filepath.Join(dir, "x")), DataBase64: "YQ"})
	wantErr(t, "unpadded", err, jsonwire.CodeInvalidRequest, "fs/writeFile requires valid base64 dataBase64: Invalid padding")
	_, err = s.WriteFile(ctx, &protocol.FsWriteFileParams{Path: uri(filepath.Join(dir, "x")), DataBase64: "a=b="})
	wantErr(t, "bad symbol", err, jsonwire.CodeInvalidRequest, "fs/writeFile requires valid base64 dataBase64: Invalid symbol 61, offset 1.")
}

func TestWriteFile_TruncatesInPlace(t *testing.T) {
	s, dir := fs.New(nil), t.TempDir()
	p, link := filepath.Join(dir, "f"), filepath.Join(dir, "hard")
	os.WriteFile(p, []byte("long contents"), 0o644)
	os.Link(p, link)
	if _, err := s.WriteFile(ctx, &protocol.FsWriteFileParams{Path: uri(p), DataBase64: "eHk="}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(link); string(got) != "xy" {
		t.Fatalf("hard link reads %q, want %q", got, "xy")
	}
}

func TestReadFile_Directory(t *testing.T) {
	s, dir := fs.New(nil), t.TempDir()
	_, err := s.ReadFile(ctx, &protocol.FsReadFileParams{Path: uri(dir)})
	wantErr(t, "follow", err, jsonwire.CodeInvalidRequest, "path `"+dir+"` is not a file")
	_, err = s.ReadFile(ctx, &protocol.FsReadFileParams{Path: uri(dir), FollowSymlinks: ptr(false)})
	wantErr(t, "nofollow", err, jsonwire.CodeInvalidRequest, "path is not a regular file")
}

func TestForeignURI(t *testing.T) {
	s := fs.New(nil)
	_, err := s.ReadFile(ctx, &protocol.FsReadFileParams{Path: "file://server/share/x"})
	wantErr(t, "unc", err, jsonwire.CodeInvalidRequest, "'file://server/share/x' is invalid on 'linux'")
	_, err = s.GetMetadata(ctx, &protocol.FsGetMetadataParams{Path: "file:///C:/x"})
	wantErr(t, "drive", err, jsonwire.CodeInvalidRequest, "'file:///C:/x' is invalid on 'linux'")
}

// Without a Launcher, a sandbox that needs the helper fails closed; one that runs
// in-process is served.
func TestSandbox_NoLauncherFailsClosed(t *testing.T) {
	s, dir := fs.New(nil), t.TempDir()
	restricted := sandboxtest.Context(t, `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[]}},"windowsSandboxLevel":"disabled"}`)
	_, err := s.ReadDirectory(ctx, &protocol.FsReadDirectoryParams{Path: uri(dir), Sandbox: restricted})
	wantErr(t, "restricted", err, jsonwire.CodeInvalidParams, "sandbox intent cannot be enforced on this executor: sandbox support is not configured")
	for _, sb := range []*policy.Context{nil, sandboxtest.Context(t, `{"permissions":{"type":"disabled"},"windowsSandboxLevel":"disabled"}`)} {
		if _, err := s.ReadDirectory(ctx, &protocol.FsReadDirectoryParams{Path: uri(dir), Sandbox: sb}); err != nil {
			t.Fatalf("sandbox %v: got %v, want success", sb, err)
		}
	}
}

func TestCreateDirectory_Nested(t *testing.T) {
	s, dir := fs.New(nil), t.TempDir()
	p := filepath.Join(dir, "a", "b", "c")
	if _, err := s.CreateDirectory(ctx, &protocol.FsCreateDirectoryParams{Path: uri(p)}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p); err != nil || !st.IsDir() {
		t.Fatalf("got %v %v, want directory", st, err)
	}
	if _, err := s.CreateDirectory(ctx, &protocol.FsCreateDirectoryParams{Path: uri(p)}); err != nil {
		t.Fatalf("existing directory, recursive: got %v, want success", err)
	}
	_, err := s.CreateDirectory(ctx, &protocol.FsCreateDirectoryParams{Path: uri(p), Recursive: ptr(false)})
	wantErr(t, "existing non-recursive", err, jsonwire.CodeInternal, "File exists (os error 17)")
}

func TestGetMetadata(t *testing.T) {
	s, dir := fs.New(nil), t.TempDir()
	file, sub := filepath.Join(dir, "f"), filepath.Join(dir, "d")
	os.WriteFile(file, []byte("12345"), 0o644)
	os.Mkdir(sub, 0o755)
	os.Symlink(file, filepath.Join(dir, "lf"))
	os.Symlink(sub, filepath.Join(dir, "ld"))
	os.Symlink(filepath.Join(dir, "missing"), filepath.Join(dir, "dangling"))
	os.Symlink(filepath.Join(dir, "loop"), filepath.Join(dir, "loop"))
	tests := []struct {
		name           string
		dir, file, sym bool
		size           uint64
	}{{"f", false, true, false, 5}, {"d", true, false, false, 0}, {"lf", false, true, true, 5}, {"ld", true, false, true, 0}}
	for _, tt := range tests {
		m, err := s.GetMetadata(ctx, &protocol.FsGetMetadataParams{Path: uri(filepath.Join(dir, tt.name))})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if m.IsDirectory != tt.dir || m.IsFile != tt.file || m.IsSymlink != tt.sym || (tt.file && m.Size != tt.size) || m.ModifiedAtMs == 0 || m.CreatedAtMs != 0 {
			t.Errorf("%s: got %+v, want dir=%v file=%v symlink=%v size=%d", tt.name, m, tt.dir, tt.file, tt.sym, tt.size)
		}
	}
	_, err := s.GetMetadata(ctx, &protocol.FsGetMetadataParams{Path: uri(filepath.Join(dir, "dangling"))})
	wantErr(t, "dangling", err, jsonwire.CodeNotFound, "")
	_, err = s.GetMetadata(ctx, &protocol.FsGetMetadataParams{Path: uri(filepath.Join(dir, "loop"))})
	wantErr(t, "loop", err, jsonwire.CodeInternal, "Symbolic link loop (os error 40)")
}

func TestFollowSymlinksFalse(t *testing.T) {
	s, dir := fs.New(nil), t.TempDir()
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o755)
	os.WriteFile(filepath.Join(real, "f"), []byte("x"), 0o644)
	os.Symlink(real, filepath.Join(dir, "ldir"))
	os.Symlink(filepath.Join(real, "f"), filepath.Join(dir, "lfile"))
	no := ptr(false)
	viaLink := uri(filepath.Join(dir, "ldir", "f"))
	lfile := uri(filepath.Join(dir, "lfile"))
	_, err := s.ReadFile(ctx, &protocol.FsReadFileParams{Path: viaLink, FollowSymlinks: no})
	wantErr(t, "ancestor read", err, jsonwire.CodeInternal, "Not a directory (os error 20)")
	_, err = s.GetMetadata(ctx, &protocol.FsGetMetadataParams{Path: lfile, FollowSymlinks: no})
	wantErr(t, "final metadata", err, jsonwire.CodeInvalidRequest, "path contains a symbolic link")
	_, err = s.ReadFile(ctx, &protocol.FsReadFileParams{Path: lfile, FollowSymlinks: no})
	wantErr(t, "final read", err, jsonwire.CodeInternal, "Symbolic link loop (os error 40)")
	_, err = s.WriteFile(ctx, &protocol.FsWriteFileParams{Path: lfile, FollowSymlinks: no})
	wantErr(t, "final write", err, jsonwire.CodeInternal, "Symbolic link loop (os error 40)")
	_, err = s.CreateDirectory(ctx, &protocol.FsCreateDirectoryParams{Path: lfile, FollowSymlinks: no})
	wantErr(t, "final mkdir", err, jsonwire.CodeInternal, "Not a directory (os error 20)")
	_, err = s.CreateDirectory(ctx, &protocol.FsCreateDirectoryParams{Path: lfile, FollowSymlinks: no, Recursive: no})
	wantErr(t, "final mkdir non-recursive", err, jsonwire.CodeInternal, "File exists (os error 17)")
	_, err = s.Remove(ctx, &protocol.FsRemoveParams{Path: lfile, FollowSymlinks: no})
	wantErr(t, "recursive remove", err, jsonwire.CodeInternal, "recursive no-follow removal is unsupported")
	_, err = s.Remove(ctx, &protocol.FsRemoveParams{Path: lfile, FollowSymlinks: no, Recursive: no})
	wantErr(t, "final remove", err, jsonwire.CodeInvalidRequest, "path contains a symbolic link")
	m, err := s.GetMetadata(ctx, &protocol.FsGetMetadataParams{Path: uri(filepath.Join(real, "f")), FollowSymlinks: no})
	if err != nil || !m.IsFile || m.Size != 1 {
		t.Fatalf("plain metadata: got %+v %v", m, err)
	}
	if _, err := s.WriteFile(ctx, &protocol.FsWriteFileParams{Path: uri(filepath.Join(real, "new")), FollowSymlinks: no}); err != nil {
		t.Fatalf("plain create: %v", err)
	}
}

func TestReadDirectory(t *testing.T) {
	s, dir := fs.New(nil), t.TempDir()
	os.Mkdir(filepath.Join(dir, "nested"), 0o755)
	os.WriteFile(filepath.Join(dir, "root.txt"), nil, 0o644)
	os.Symlink(filepath.Join(dir, "nested"), filepath.Join(dir, "link"))
	os.Symlink(filepath.Join(dir, "nope"), filepath.Join(dir, "dangling"))
	syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad\xffname"), nil, 0o644)
	res, err := s.ReadDirectory(ctx, &protocol.FsReadDirectoryParams{Path: uri(dir)})
	if err != nil {
		t.Fatal(err)
	}
	want := []protocol.FsDirectoryEntry{{FileName: "bad\uFFFDname", IsDirectory: false, IsFile: true}, {FileName: "fifo", IsDirectory: false, IsFile: false}, {FileName: "link", IsDirectory: true, IsFile: false}, {FileName: "nested", IsDirectory: true, IsFile: false}, {FileName: "root.txt", IsDirectory: false, IsFile: true}}
	if len(res.Entries) != len(want) {
		t.Fatalf("got %+v, want %+v", res.Entries, want)
	}
	for i := range want {
		if res.Entries[i] != want[i] {
			t.Errorf("entry %d: got %+v, want %+v", i, res.Entries[i], want[i])
		}
	}
	_, err = s.ReadDirectory(ctx, &protocol.FsReadDirectoryParams{Path: uri(filepath.Join(dir, "root.txt"))})
	wantErr(t, "file", err, jsonwire.CodeInternal, "Not a directory (os error 20)")
}

func TestRemove(t *testing.T) {
	s, dir := fs.New(nil), t.TempDir()
	tree := filepath.Join(dir, "tree")
	os.MkdirAll(filepath.Join(tree, "a", "b"), 0o755)
	os.WriteFile(filepath.Join(tree, "a", "f"), nil, 0o644)
	if _, err := s.Remove(ctx, &protocol.FsRemoveParams{Path: uri(tree), Recursive: ptr(false)}); err == nil {
		t.Fatal("non-recursive remove of a non-empty dir: got success")
	} else {
		wantErr(t, "non-empty", err, jsonwire.CodeInternal, "Directory not empty (os error 39)")
	}
	if _, err := s.Remove(ctx, &protocol.FsRemoveParams{Path: uri(tree)}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(tree); !os.IsNotExist(err) {
		t.Fatalf("tree still exists: %v", err)
	}
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("x"), 0o644)
	os.Symlink(target, filepath.Join(dir, "link"))
	if _, err := s.Remove(ctx, &protocol.FsRemoveParams{Path: uri(filepath.Join(dir, "link"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target); err != nil {
		t.Fatalf("target removed: %v", err)
	}
	// A parent that is a file is an error even with force (observed from codex 0.169.0).
	_, err0 := s.Remove(ctx, &protocol.FsRemoveParams{Path: uri(filepath.Join(target, "under-file"))})
	wantErr(t, "force under a file", err0, jsonwire.CodeInternal, "Not a directory (os error 20)")
	_, err := s.Remove(ctx, &protocol.FsRemoveParams{Path: uri(filepath.Join(dir, "missing")), Force: ptr(false)})
	wantErr(t, "force false", err, jsonwire.CodeNotFound, "No such file or directory (os error 2)")
}

func TestCopy(t *testing.T) {
	s, dir := fs.New(nil), t.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(filepath.Join(src, "sub"), 0o755)
	os.WriteFile(filepath.Join(src, "sub", "f"), []byte("data"), 0o644)
	os.Symlink("sub/f", filepath.Join(src, "link"))
	syscall.Mkfifo(filepath.Join(src, "fifo"), 0o644)
	_, err := s.Copy(ctx, &protocol.FsCopyParams{SourcePath: uri(src), DestinationPath: uri(filepath.Join(dir, "dst"))})
	wantErr(t, "no recursive", err, jsonwire.CodeInvalidRequest, "fs/copy requires recursive: true when sourcePath is a directory")
	_, err = s.Copy(ctx, &protocol.FsCopyParams{SourcePath: uri(src), DestinationPath: uri(filepath.Join(src, "sub", "x")), Recursive: true})
	wantErr(t, "descendant", err, jsonwire.CodeInvalidRequest, "fs/copy cannot copy a directory to itself or one of its descendants")
	_, err = s.Copy(ctx, &protocol.FsCopyParams{SourcePath: uri(filepath.Join(src, "fifo")), DestinationPath: uri(filepath.Join(dir, "f2"))})
	wantErr(t, "fifo", err, jsonwire.CodeInvalidRequest, "fs/copy only supports regular files, directories, and symlinks")
	dst := filepath.Join(dir, "dst")
	if _, err := s.Copy(ctx, &protocol.FsCopyParams{SourcePath: uri(src), DestinationPath: uri(dst), Recursive: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dst, "sub", "f")); string(got) != "data" {
		t.Fatalf("copied file: got %q, want %q", got, "data")
	}
	if got, err := os.Readlink(filepath.Join(dst, "link")); err != nil || got != "sub/f" {
		t.Fatalf("copied link: got %q %v, want %q", got, err, "sub/f")
	}
	if _, err := os.Lstat(filepath.Join(dst, "fifo")); !os.IsNotExist(err) {
		t.Fatalf("fifo copied: %v", err)
	}
	if _, err := s.Copy(ctx, &protocol.FsCopyParams{SourcePath: uri(filepath.Join(src, "link")), DestinationPath: uri(filepath.Join(dir, "toplink"))}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.Readlink(filepath.Join(dir, "toplink")); got != "sub/f" {
		t.Fatalf("top-level link: got %q, want %q", got, "sub/f")
	}
}

func TestCanonicalize(t *testing.T) {
	s, dir := fs.New(nil), t.TempDir()
	real := filepath.Join(dir, "real dir")
	os.Mkdir(real, 0o755)
	os.Symlink(real, filepath.Join(dir, "link"))
	res, err := s.Canonicalize(ctx, &protocol.FsCanonicalizeParams{Path: uri(filepath.Join(dir, "link"))})
	want, _ := filepath.EvalSymlinks(real)
	if err != nil || res.Path != uri(want) {
		t.Fatalf("got %v %v, want %s", res, err, uri(want))
	}
}

func TestWalk(t *testing.T) {
	s, dir := fs.New(nil), t.TempDir()
	os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755)
	os.MkdirAll(filepath.Join(dir, ".hidden"), 0o755)
	os.WriteFile(filepath.Join(dir, ".hidden", "h"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "a", "f"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "z"), nil, 0o644)
	os.Symlink(dir, filepath.Join(dir, "a", "loop"))
	opts := protocol.FsWalkOptions{MaxDepth: 10, MaxDirectories: 100, MaxEntries: 100, FollowDirectorySymlinks: true, PruneHiddenDirectories: true}
	res, err := s.Walk(ctx, &protocol.FsWalkParams{Path: uri(dir), Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range res.Entries {
		got = append(got, strings.TrimPrefix(string(e.Path), string(uri(dir)))+":"+e.Kind)
	}
	want := "/.hidden:directory /a:directory /z:file /a/b:directory /a/f:file /a/loop:directory"
	if strings.Join(got, " ") != want || res.Truncated {
		t.Fatalf("got %v truncated=%v, want %s", got, res.Truncated, want)
	}
	opts.MaxEntries = 2
	res, _ = s.Walk(ctx, &protocol.FsWalkParams{Path: uri(dir), Options: opts})
	if len(res.Entries) != 2 || !res.Truncated {
		t.Fatalf("maxEntries 2: got %d entries truncated=%v", len(res.Entries), res.Truncated)
	}
	for _, o := range []protocol.FsWalkOptions{{MaxDepth: 65, MaxDirectories: 1, MaxEntries: 1}, {MaxDepth: 1, MaxDirectories: 10001, MaxEntries: 1}, {MaxDepth: 1, MaxDirectories: 1, MaxEntries: 50001}} {
		_, err := s.Walk(ctx, &protocol.FsWalkParams{Path: uri(dir), Options: o})
		wantErr(t, "over max", err, jsonwire.CodeInvalidRequest, "filesystem walk limits exceed maximums: depth=64, directories=10000, entries=50000")
	}
	_, err = s.Walk(ctx, &protocol.FsWalkParams{Path: uri(dir), Options: protocol.FsWalkOptions{MaxDepth: 1, MaxEntries: 1}})
	wantErr(t, "zero dirs", err, jsonwire.CodeInvalidRequest, "")
	res, err = s.Walk(ctx, &protocol.FsWalkParams{Path: uri(filepath.Join(dir, "z")), Options: opts})
	if err != nil || len(res.Entries) != 0 {
		t.Fatalf("file root: got %+v %v, want empty", res, err)
	}
}
