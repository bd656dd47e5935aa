package sandbox

import (
	"errors"
	"io/fs"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// Command start failures (spec/sandbox.md §2.10, observed from codex 0.169.0): when
// the stage cannot execute the command (not found on PATH, missing path, not
// executable) the reference panics with exit 101 and
// "Failed to execvp <argv0>: <musl strerror> (os error <n>)", and sandboxDenied is
// true (the panic banner names linux-sandbox). The stages report the same line, with
// the panicPrefix token instead of the Rust banner, and the same exit code.

// execvpMessage renders a failure to execute name as the reference words it.
func execvpMessage(name string, err error) string {
	e := execErrno(err)
	return "Failed to execvp " + name + ": " + errnoText(e) + " (os error " + strconv.Itoa(int(e)) + ")"
}

// execErrno is the errno execvp would have set for err, a failure of exec.LookPath
// or of starting the resolved file.
func execErrno(err error) syscall.Errno {
	var en syscall.Errno
	switch {
	case errors.As(err, &en):
		return en
	case errors.Is(err, exec.ErrNotFound):
		return syscall.ENOENT
	case errors.Is(err, fs.ErrPermission):
		return syscall.EACCES // LookPath: a directory or a file without execute bits
	case errors.Is(err, fs.ErrNotExist):
		return syscall.ENOENT
	}
	return syscall.ENOENT
}

// muslExecTexts are musl's strerror texts for the errnos execve can return (the
// reference is linked against musl; Go's own texts are glibc-style lower case).
var muslExecTexts = map[syscall.Errno]string{
	syscall.ENOENT:       "No such file or directory",
	syscall.EACCES:       "Permission denied",
	syscall.EPERM:        "Operation not permitted",
	syscall.ENOTDIR:      "Not a directory",
	syscall.ENOEXEC:      "Exec format error",
	syscall.ELOOP:        "Symbolic link loop",
	syscall.ENAMETOOLONG: "Filename too long",
	syscall.ETXTBSY:      "Text file busy",
	syscall.E2BIG:        "Argument list too long",
	syscall.ENOMEM:       "Out of memory",
	syscall.EISDIR:       "Is a directory",
	syscall.EIO:          "I/O error",
}

func errnoText(e syscall.Errno) string {
	if t, ok := muslExecTexts[e]; ok {
		return t
	}
	t := e.Error()
	if t == "" {
		return "Unknown error " + strconv.Itoa(int(e))
	}
	return strings.ToUpper(t[:1]) + t[1:]
}
