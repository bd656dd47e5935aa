//go:build unix

package server_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/execlab/executor/registry/server"
)

// TestOpenStore_FileModes opens a SQLite store on a real file under a permissive umask
// (022, the usual default) and checks that the file and the -wal and -shm files SQLite
// creates beside it are 0600 while the store is in use: they hold the URL signing keys.
func TestOpenStore_FileModes(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "registry.db")
	st, err := server.OpenStore(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// A write makes SQLite open the WAL (and its shared-memory index).
	if _, err := st.Register(context.Background(), "env-1", "reg-1", []byte("key"), [32]byte{}, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(p), err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s has mode %#o, want 0600", filepath.Base(p), perm)
		}
	}
}
