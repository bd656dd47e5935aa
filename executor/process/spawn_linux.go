//go:build linux

package process

import (
	"errors"
	"golang.org/x/sys/unix"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/creack/pty"

	"github.com/execlab/executor/executor/protocol"
)

// Spawn errors whose texts come from the reference's Rust std (observed from codex 0.169.0).
var (
	errMissingPipeProgram = errors.New("missing program for pipe spawn")
	errMissingPtyProgram  = errors.New("missing program for PTY spawn")
	errNulInArgs          = errors.New("nul byte found in provided data")
	errNulInEnv           = errors.New("data provided contains a nul byte")
)

// sysProcAttr: the child leads its own session and process group, and gets SIGTERM when
// the server dies (spec/jsonrpc.md §5.1). Linux delivers Pdeathsig when the OS thread
// that forked exits; Go only retires threads of goroutines that exit while locked to
// one, which this package never does. Signal dispositions handled by the Go runtime
// (SIGPIPE included) revert to SIG_DFL at execve.
func sysProcAttr(tty bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGTERM}
	if tty {
		a.Setctty = true
		a.Ctty = 0 // the slave is the child's fd 0
	}
	return a
}

func spawn(s *spawnSpec) (*spawned, error) {
	if s.wrapped != nil {
		return spawnWrapped(s)
	}
	if s.tty {
		return spawnPty(s)
	}
	return spawnPipes(s)
}

// childArgv returns argv with argv[0] replaced by arg0 when set.
func childArgv(s *spawnSpec) []string {
	argv := append([]string(nil), s.argv...)
	if s.arg0 != nil {
		argv[0] = *s.arg0
	}
	return argv
}

func hasNul(ss ...string) bool {
	for _, s := range ss {
		if strings.IndexByte(s, 0) >= 0 {
			return true
		}
	}
	return false
}

func envHasNul(env map[string]string) bool {
	for k, v := range env {
		if hasNul(k, v) {
			return true
		}
	}
	return false
}

func spawnPipes(s *spawnSpec) (*spawned, error) {
	if s.argv[0] == "" {
		return nil, errMissingPipeProgram
	}
	argv := childArgv(s)
	if hasNul(argv...) || hasNul(s.argv[0], s.cwd) {
		return nil, errNulInArgs
	}
	if envHasNul(s.env) {
		return nil, errNulInEnv
	}
	program, err := lookPipeProgram(s.argv[0], s.cwd, s.env)
	if err != nil {
		return nil, err
	}
	return startPipes(program, argv, s.cwd, envList(s.env), s.pipeStdin, s.extraFiles...)
}

// startPipes starts program with stdout/stderr pipes and stdin from a pipe (pipeStdin)
// or /dev/null.
func startPipes(program string, argv []string, dir string, env []string, pipeStdin bool, extra ...*os.File) (_ *spawned, err error) {
	var parentFiles, childFiles []*os.File
	defer func() {
		for _, f := range childFiles {
			_ = f.Close()
		}
		if err != nil {
			for _, f := range parentFiles {
				_ = f.Close()
			}
		}
	}()
	sp := &spawned{}
	var stdinChild *os.File
	if pipeStdin {
		r, w, perr := os.Pipe()
		if perr != nil {
			return nil, perr
		}
		stdinChild, sp.stdin = r, w
		parentFiles = append(parentFiles, w)
	} else {
		stdinChild, err = os.Open(os.DevNull)
		if err != nil {
			return nil, err
		}
	}
	childFiles = append(childFiles, stdinChild)
	files := []*os.File{stdinChild}
	for range 2 {
		r, w, perr := os.Pipe()
		if perr != nil {
			return nil, perr
		}
		parentFiles = append(parentFiles, r)
		childFiles = append(childFiles, w)
		growPipe(r)
		sp.outputs = append(sp.outputs, r)
		files = append(files, w)
	}
	sp.proc, err = os.StartProcess(program, argv, &os.ProcAttr{
		Dir:   dir,
		Env:   env,
		Files: append(files, extra...),
		Sys:   sysProcAttr(false),
	})
	if err != nil {
		return nil, err
	}
	return sp, nil
}

// lookPipeProgram resolves a pipe-mode program as the reference's execvp does: a name
// with '/' is used as is (relative to the child's cwd); a bare name is searched on the
// PATH of the child env, else on the server's PATH. A candidate that exists but cannot
// be executed makes the result EACCES unless a later one works; none at all is ENOENT.
// The child chdirs before it execs, so a bad cwd is reported in preference.
func lookPipeProgram(name, cwd string, env map[string]string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	pathVar, ok := env["PATH"]
	if !ok {
		pathVar = os.Getenv("PATH")
	}
	sawEACCES := false
	for _, dir := range strings.Split(pathVar, ":") {
		cand := joinPath(dir, name)
		if !filepath.IsAbs(cand) {
			cand = joinPath(cwd, cand)
		}
		fi, err := os.Stat(cand)
		if err != nil {
			if errors.Is(err, syscall.EACCES) {
				sawEACCES = true
			}
			continue
		}
		if fi.Mode().IsRegular() && syscall.Access(cand, 1 /* X_OK */) == nil {
			return cand, nil
		}
		sawEACCES = true
	}
	if fi, err := os.Stat(cwd); err != nil {
		return "", err
	} else if !fi.IsDir() {
		return "", &os.PathError{Op: "chdir", Path: cwd, Err: syscall.ENOTDIR}
	}
	if sawEACCES {
		return "", &os.PathError{Op: "exec", Path: name, Err: syscall.EACCES}
	}
	return "", &os.PathError{Op: "exec", Path: name, Err: syscall.ENOENT}
}

func spawnPty(s *spawnSpec) (*spawned, error) {
	if s.argv[0] == "" {
		return nil, errMissingPtyProgram
	}
	cwd := s.cwd
	if fi, serr := os.Stat(cwd); serr != nil || !fi.IsDir() {
		cwd = ptyHomeDir(s.env) // observed: a PTY child with a missing cwd starts at home
	}
	program, err := resolvePtyProgram(s.argv[0], cwd, s.env)
	if err != nil {
		return nil, err
	}
	argv := childArgv(s)
	if hasNul(argv[1:]...) || hasNul(cwd) {
		return nil, errNulInArgs
	}
	if envHasNul(s.env) {
		return nil, errNulInEnv
	}
	return startPty(program, argv, cwd, envList(s.env), s.ptySize, s.extraFiles...)
}

// startPty starts program on a new PTY that becomes its controlling terminal, sized size
// (nil: 24×80).
func startPty(program string, argv []string, dir string, env []string, size *protocol.PtySize, extra ...*os.File) (_ *spawned, err error) {
	master, slave, err := pty.Open()
	if err != nil {
		return nil, err
	}
	defer func() { _ = slave.Close() }()
	defer func() { _ = master.Close() }() // the parent keeps only pollable dups
	ws := &pty.Winsize{Rows: ptyRows, Cols: ptyCols}
	if size != nil {
		ws = &pty.Winsize{Rows: size.Rows, Cols: size.Cols, X: size.PixelWidth, Y: size.PixelHeight}
	}
	if err := pty.Setsize(slave, ws); err != nil {
		return nil, err
	}
	sp := &spawned{}
	rd, err := pollableDup(master, "ptmx-read")
	if err != nil {
		return nil, err
	}
	wr, err := pollableDup(master, "ptmx-write")
	if err != nil {
		_ = rd.Close()
		return nil, err
	}
	sp.outputs, sp.stdin = []*os.File{rd}, wr
	sp.proc, err = os.StartProcess(program, argv, &os.ProcAttr{
		Dir:   dir,
		Env:   env,
		Files: append([]*os.File{slave, slave, slave}, extra...),
		Sys:   sysProcAttr(true),
	})
	if err != nil {
		sp.closeAll()
		return nil, err
	}
	return sp, nil
}

// pollableDup returns a non-blocking close-on-exec duplicate of f registered with the
// runtime poller, so reads honour deadlines and Close unblocks them. (pty.Open leaves
// the master in blocking mode.)
func pollableDup(f *os.File, name string) (*os.File, error) {
	fd, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_DUPFD_CLOEXEC, 0)
	if errno != 0 {
		return nil, os.NewSyscallError("fcntl", errno)
	}
	if err := syscall.SetNonblock(int(fd), true); err != nil {
		_ = syscall.Close(int(fd))
		return nil, os.NewSyscallError("setnonblock", err)
	}
	return os.NewFile(fd, name), nil
}

// ptyHomeDir is where a PTY child starts when its cwd is missing: HOME from the child
// env, else the server's home directory.
func ptyHomeDir(env map[string]string) string {
	if h, ok := env["HOME"]; ok && h != "" {
		return h
	}
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return "/"
}

// spawnWrapped starts the sandbox launcher for a sandboxed command. The command's own
// argv and env are checked for NUL bytes like an unsandboxed one; program lookup and
// arg0 are the stage's business. A missing cwd fails the spawn (chdir ENOENT), as in
// the reference (spec/sandbox.md §1.6).
func spawnWrapped(s *spawnSpec) (*spawned, error) {
	w := s.wrapped
	if s.argv[0] == "" {
		if s.tty {
			return nil, errMissingPtyProgram
		}
		return nil, errMissingPipeProgram
	}
	if hasNul(s.argv...) || hasNul(s.cwd) || (s.arg0 != nil && hasNul(*s.arg0)) {
		return nil, errNulInArgs
	}
	if envHasNul(s.env) {
		return nil, errNulInEnv
	}
	if s.tty {
		return startPty(w.Path, w.Args, w.Dir, w.Env, s.ptySize)
	}
	return startPipes(w.Path, w.Args, w.Dir, w.Env, s.pipeStdin)
}

// growPipe asks for an outputPipeBytes pipe buffer, best effort (an unprivileged process
// may be refused above /proc/sys/fs/pipe-max-size): a fast writer then fills larger
// reads, so fewer, bigger process/output chunks carry the same bytes. SyscallConn keeps
// the descriptor non-blocking (File.Fd would not), which read deadlines rely on.
func growPipe(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, outputPipeBytes)
	})
}
