package sandbox

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// capsRetained reports whether the calling thread holds any effective or permitted
// capability (capget, version 3; spec/sandbox.md §3.8 step 2).
func capsRetained() (bool, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false, fmt.Errorf("reading capabilities: %w", err)
	}
	for _, d := range data {
		if d.Effective != 0 || d.Permitted != 0 {
			return true, nil
		}
	}
	return false, nil
}

// dropAllCaps clears the bounding set, ambient, inheritable, permitted and effective
// capabilities of the calling thread (degraded backend, spec/sandbox.md §3.11). When
// CAP_SETPCAP is held it first locks securebits NOROOT|NO_SETUID_FIXUP so root cannot
// regain them on exec.
func dropAllCaps() error {
	const (
		secbitNoroot             = 1 << 0
		secbitNorootLocked       = 1 << 1
		secbitNoSetuidFixup      = 1 << 2
		secbitNoSetuidFixupLockd = 1 << 3
	)
	_ = unix.Prctl(unix.PR_SET_SECUREBITS,
		secbitNoroot|secbitNorootLocked|secbitNoSetuidFixup|secbitNoSetuidFixupLockd, 0, 0, 0)
	for c := 0; c <= unix.CAP_LAST_CAP; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL && err != unix.EPERM {
			return fmt.Errorf("dropping bounding capability %d: %w", c, err)
		}
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("clearing capabilities: %w", err)
	}
	return nil
}
