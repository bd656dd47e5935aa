package sandbox

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/execlab/executor/sandbox/policy"
)

// installSeccomp sets no_new_privs and installs the mode's filter on the CALLING
// THREAD only (no TSYNC; spec/sandbox.md §3.8 step 4). The caller must have locked its
// goroutine to the OS thread and must never unlock it: the thread is confined for good.
func installSeccomp(mode policy.SeccompMode, opts SeccompOptions) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting no_new_privs: %w", err)
	}
	prog, err := BuildSeccompProgram(runtime.GOARCH, mode, opts)
	if err != nil || prog == nil {
		return err
	}
	filter := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		filter[i] = unix.SockFilter{Code: in.Code, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if _, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0,
		uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("installing seccomp filter: %w", errno)
	}
	runtime.KeepAlive(filter)
	return nil
}
