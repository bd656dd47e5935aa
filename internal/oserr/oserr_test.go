package oserr_test

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/execlab/executor/internal/oserr"
	"github.com/execlab/executor/jsonwire"
)

func TestText_RendersMuslWording(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{syscall.ENOENT, "No such file or directory (os error 2)"},
		{syscall.EACCES, "Permission denied (os error 13)"},
		{syscall.ENOTDIR, "Not a directory (os error 20)"},
		{syscall.ELOOP, "Symbolic link loop (os error 40)"},
		{syscall.ENOTEMPTY, "Directory not empty (os error 39)"},
		{syscall.EEXIST, "File exists (os error 17)"},
		{&os.PathError{Op: "open", Path: "/x", Err: syscall.ENOENT}, "No such file or directory (os error 2)"},
		{fmt.Errorf("reading: %w", syscall.EROFS), "Read-only file system (os error 30)"},
		{syscall.Errno(4095), "Unknown error 4095 (os error 4095)"},
		{fmt.Errorf("plain"), "plain"},
	}
	for _, tt := range tests {
		if got := oserr.Text(tt.err); got != tt.want {
			t.Errorf("Text(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestToRPC_MapsKinds(t *testing.T) {
	tests := []struct {
		err  error
		code int
	}{
		{syscall.ENOENT, jsonwire.CodeNotFound},
		{syscall.EACCES, jsonwire.CodeInvalidRequest},
		{syscall.EPERM, jsonwire.CodeInvalidRequest},
		{syscall.EINVAL, jsonwire.CodeInvalidRequest},
		{syscall.ENOTDIR, jsonwire.CodeInternal},
		{jsonwire.InvalidRequest("custom"), jsonwire.CodeInvalidRequest},
	}
	for _, tt := range tests {
		if got := oserr.ToRPC(tt.err); got.Code != tt.code {
			t.Errorf("ToRPC(%v).Code = %d, want %d", tt.err, got.Code, tt.code)
		}
	}
}
