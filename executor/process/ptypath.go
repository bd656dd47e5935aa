package process

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// PTY program resolution. The reference spawns PTY children through portable-pty, which
// resolves the program itself and reports failures in its own words; these texts were
// observed from codex 0.169.0 (spec/jsonrpc.md §3.1):
//
//	bare name, no PATH in the child env   Unable to spawn <name> because:\nUnable to resolve the PATH
//	bare name, not found on PATH          Unable to spawn <name> because:\n[<cand> exists but is a directory.\n|<cand> exists but is not executable.\n]*No viable candidates found in PATH "<PATH>"
//	"./x", "../x", ".", ".."              Unable to spawn <cwd>/<name> because it does not exist | it is a directory | it is not executable
//	absolute                              not checked: execve reports the OS error
//
// The PTY program is argv[0]; arg0 only sets the child's argv[0] ($0), as in pipe mode
// (codex 0.171.0). 0.169.0 ran arg0 instead, with its own texts for an absolute arg0;
// we follow the newest release (README deviations). A name containing '/' that does
// not start with "./" or "../" is still searched on PATH (observed).

// ptySpawnError is a PTY resolution failure; its text goes on the wire as is.
type ptySpawnError struct{ msg string }

func (e *ptySpawnError) Error() string { return e.msg }

// resolvePtyProgram returns the path to execute for a PTY child.
func resolvePtyProgram(name, cwd string, env map[string]string) (string, error) {
	switch {
	case filepath.IsAbs(name):
		return name, nil
	case isDotRelative(name):
		full := joinPath(cwd, name)
		return full, checkRelativeProgram(full)
	}
	pathVar, ok := env["PATH"]
	if !ok {
		return "", &ptySpawnError{msg: "Unable to spawn " + name + " because:\nUnable to resolve the PATH"}
	}
	var b strings.Builder
	b.WriteString("Unable to spawn " + name + " because:\n")
	for _, dir := range strings.Split(pathVar, ":") {
		cand := joinPath(dir, name)
		if !filepath.IsAbs(cand) {
			cand = joinPath(cwd, cand)
		}
		fi, err := os.Stat(cand)
		if err != nil {
			continue
		}
		switch {
		case fi.IsDir():
			b.WriteString(cand + " exists but is a directory.\n")
		case !isExecutable(fi):
			b.WriteString(cand + " exists but is not executable.\n")
		default:
			return cand, nil
		}
	}
	b.WriteString("No viable candidates found in PATH " + rustDebugQuote(pathVar))
	return "", &ptySpawnError{msg: b.String()}
}

func checkRelativeProgram(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return &ptySpawnError{msg: "Unable to spawn " + p + " because it does not exist"}
	}
	if fi.IsDir() {
		return &ptySpawnError{msg: "Unable to spawn " + p + " because it is a directory"}
	}
	if !isExecutable(fi) {
		return &ptySpawnError{msg: "Unable to spawn " + p + " because it is not executable"}
	}
	return nil
}

// isDotRelative reports whether name's first component is "." or "..".
func isDotRelative(name string) bool {
	first, _, _ := strings.Cut(name, "/")
	return first == "." || first == ".."
}

func isExecutable(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o111 != 0 }

// joinPath joins like Rust's Path::join: no cleaning, one separator.
func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	if strings.HasSuffix(dir, "/") {
		return dir + name
	}
	return dir + "/" + name
}

// rustDebugQuote quotes s as Rust's <str as Debug> does for the characters that occur in
// practice.
func rustDebugQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == 0:
			b.WriteString(`\0`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u{%x}`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
