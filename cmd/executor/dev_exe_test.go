package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGoRunBuild: binaries of `go run` (a file in exe/ below a go-build… directory) are
// recognised; installed or built binaries are not.
func TestGoRunBuild(t *testing.T) {
	for _, tt := range []struct {
		path string
		want bool
	}{
		{"/tmp/go-build2719412345/b001/exe/executor", true},
		{"/var/folders/x/T/go-build99/b001/exe/executor", true},
		{"/usr/local/bin/executor", false},
		{"/home/u/src/executor/executor", false},
		{"/home/u/exe/executor", false},
	} {
		if got := goRunBuild(tt.path); got != tt.want {
			t.Errorf("goRunBuild(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

// TestCopyExecutable: the copy dev prints under `go run` is a byte-identical executable
// file inside dev's own directory.
func TestCopyExecutable(t *testing.T) {
	src := filepath.Join(t.TempDir(), "go-build1", "b001", "exe", "executor")
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		t.Fatal(err)
	}
	body := []byte("#!/bin/sh\necho hi\n")
	if err := os.WriteFile(src, body, 0o755); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "executor")
	if err := copyExecutable(src, dst); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dst)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("copy = %q, %v; want %q", got, err, body)
	}
	if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("copy mode = %v, %v; want 0755", fi.Mode(), err)
	}
}
