//go:build linux || darwin

package registrycmd

import "syscall"

// fdLimit returns the soft RLIMIT_NOFILE (which the Go runtime raises to the hard limit at
// start-up on Linux and macOS).
func fdLimit() (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur == ^uint64(0) {
		return 0, false
	}
	return r.Cur, true
}
