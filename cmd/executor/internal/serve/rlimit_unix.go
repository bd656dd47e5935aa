//go:build unix

package serve

import "syscall"

// softNoFile returns the process's soft RLIMIT_NOFILE, or 0 when unknown.
func softNoFile() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return uint64(r.Cur)
}
