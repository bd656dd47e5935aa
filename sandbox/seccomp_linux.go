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
	return installSeccompFlags(mode, opts, 0)
}

// installSeccompAllThreads is installSeccomp with SECCOMP_FILTER_FLAG_TSYNC: the
// filter, and no_new_privs with it, apply to every thread of the process. For a
// stage that runs confined code itself (runInProcess), never for one that keeps
// unfiltered threads.
func installSeccompAllThreads(mode policy.SeccompMode, opts SeccompOptions) error {
	return installSeccompFlags(mode, opts, unix.SECCOMP_FILTER_FLAG_TSYNC)
}

func installSeccompFlags(mode policy.SeccompMode, opts SeccompOptions, flags uintptr) error {
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
	// With TSYNC a positive return is the id of a thread that could not be synchronized.
	if r, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags,
		uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return fmt.Errorf("installing seccomp filter: %w", errno)
	} else if r != 0 {
		return fmt.Errorf("installing seccomp filter: thread %d could not be synchronized", r)
	}
	runtime.KeepAlive(filter)
	return nil
}
