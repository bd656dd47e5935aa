package sandbox_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

func errnoName(err error) string {
	var en unix.Errno
	if errors.As(err, &en) {
		return unix.ErrnoName(en)
	}
	return err.Error()
}

func report(err error) int {
	if err != nil {
		fmt.Println(errnoName(err))
	} else {
		fmt.Println("ok")
	}
	return 0
}

func runProbeProgram(name string, args []string) int {
	switch name {
	case "argv0":
		fmt.Println(os.Args[0])
		return 0
	case "status":
		b, _ := os.ReadFile("/proc/self/status")
		for _, line := range strings.Split(string(b), "\n") {
			for _, k := range []string{"CapEff:", "CapPrm:", "NoNewPrivs:", "Seccomp:"} {
				if strings.HasPrefix(line, k) {
					fmt.Println(strings.Join(strings.Fields(line), " "))
				}
			}
		}
		return 0
	case "tcp":
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err == nil {
			err = unix.Connect(fd, &unix.SockaddrInet4{Port: 9, Addr: [4]byte{127, 0, 0, 1}})
			if err == unix.ECONNREFUSED {
				err = nil // the socket and connect syscalls were allowed
			}
		}
		return report(err)
	case "unix-connect":
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err == nil {
			err = unix.Connect(fd, &unix.SockaddrUnix{Name: args[0]})
		}
		return report(err)
	case "vsock":
		_, err := unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM, 0)
		return report(err)
	case "socketpair":
		_, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		return report(err)
	case "io_uring":
		var params [120]byte
		_, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
		if e == 0 {
			return report(nil)
		}
		return report(e)
	case "ptrace":
		_, _, e := unix.RawSyscall(unix.SYS_PTRACE, unix.PTRACE_TRACEME, 0, 0)
		if e == 0 {
			return report(nil)
		}
		return report(e)
	case "write":
		return report(os.WriteFile(args[0], []byte("x"), 0o644))
	case "mkdir":
		return report(os.Mkdir(args[0], 0o755))
	case "read":
		_, err := os.ReadFile(args[0])
		return report(err)
	case "rename-then-write":
		// rename args[0] to args[1], recreate args[0]/args[2]'s parent chain, then write
		// args[0]/args[2]: the ancestor-rename attack on a read-only carve-out.
		if err := os.Rename(args[0], args[1]); err != nil {
			return report(err)
		}
		f := filepath.Join(args[0], args[2])
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return report(err)
		}
		return report(os.WriteFile(f, []byte("x"), 0o644))
	}
	fmt.Println("unknown probe", name)
	return 2
}
