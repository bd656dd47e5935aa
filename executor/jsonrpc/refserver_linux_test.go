package jsonrpc_test

import (
	"os/exec"
	"syscall"
)

// killWithParent makes the reference die with the test binary even when TestMain never
// gets to stop it (a timeout panic, a kill).
func killWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
