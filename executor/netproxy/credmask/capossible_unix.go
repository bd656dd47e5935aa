//go:build unix

package credmask

import (
	"fmt"
	"syscall"
)

// writableDir checks write and search permission on dir for this process (access(2)).
func writableDir(dir string) error {
	const wOK, xOK = 0x2, 0x1 // access(2) W_OK, X_OK
	if err := syscall.Access(dir, wOK|xOK); err != nil {
		return fmt.Errorf("credmask: %s is not writable: %w", dir, err)
	}
	return nil
}
