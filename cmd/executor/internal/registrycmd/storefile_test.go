//go:build unix

package registrycmd_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/execlab/executor/cmd/executor/internal/registrycmd"
	"github.com/execlab/executor/internal/syncbuf"
)

// TestStart_StoreFileIsPrivate: `registry serve --db F` on a new file leaves F, F-wal and
// F-shm 0600 under the usual umask (they hold the URL signing keys) and warns about
// nothing; an existing store that group or others can read is served, with a warning
// naming the file and its mode.
func TestStart_StoreFileIsPrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	db := filepath.Join(t.TempDir(), "registry.db")
	start := func(logs *syncbuf.Buffer) *registrycmd.Service {
		t.Helper()
		svc, err := registrycmd.Start(context.Background(), registrycmd.Config{Listen: "127.0.0.1:0", DB: db,
			Tokens: mustTokens(t, "t roles=harness envs=e\n"), Logger: slog.New(slog.NewTextHandler(logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		return svc
	}
	var logs syncbuf.Buffer
	svc := start(&logs)
	// The node has written its lease and signing keys by now, so the WAL is open.
	for _, p := range []string{db, db + "-wal", db + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(p), err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s has mode %#o, want 0600", filepath.Base(p), perm)
		}
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("a new private store logged a warning:\n%s", logs.String())
	}

	if err := os.Chmod(db, 0o644); err != nil {
		t.Fatal(err)
	}
	var logs2 syncbuf.Buffer
	svc = start(&logs2)
	svc.Close()
	out := logs2.String()
	if !strings.Contains(out, "registry database is accessible to group or others") || !strings.Contains(out, "mode=0644") ||
		!strings.Contains(out, "path="+db+" ") {
		t.Errorf("start-up on a 0644 store did not warn about it:\n%s", out)
	}
}

// TestCheckStoreFile warns about any group/other permission on the store or its -wal and
// -shm files, and ignores DSNs that are not files.
func TestCheckStoreFile(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "registry.db")
	for _, tc := range []struct {
		file string
		mode os.FileMode
		warn bool
	}{{db, 0o600, false}, {db, 0o400, false}, {db, 0o640, true}, {db, 0o604, true}, {db, 0o620, true},
		{db + "-wal", 0o644, true}, {db + "-shm", 0o606, true}} {
		for _, p := range []string{db, db + "-wal", db + "-shm"} {
			os.Remove(p)
		}
		if err := os.WriteFile(tc.file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(tc.file, tc.mode); err != nil {
			t.Fatal(err)
		}
		var logs syncbuf.Buffer
		registrycmd.CheckStoreFile(db, slog.New(slog.NewTextHandler(&logs, nil)))
		if got := strings.Contains(logs.String(), "accessible to group or others"); got != tc.warn {
			t.Errorf("%s mode %#o: warned %v, want %v", filepath.Base(tc.file), tc.mode, got, tc.warn)
		}
	}
	for _, dsn := range []string{":memory:", "postgres://u@127.0.0.1/x", filepath.Join(dir, "absent.db")} {
		var logs syncbuf.Buffer
		registrycmd.CheckStoreFile(dsn, slog.New(slog.NewTextHandler(&logs, nil)))
		if logs.String() != "" {
			t.Errorf("%s: logged %s", dsn, logs.String())
		}
	}
}
