package reexec

import "syscall"

// Exit ends the process with code immediately (see the package doc). Output written
// with os.Stdout/os.Stderr is unbuffered and already in the kernel.
func Exit(code int) {
	syscall.Exit(code)
}
