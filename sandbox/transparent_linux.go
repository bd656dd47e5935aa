package sandbox

// Transparent TCP's privileged step (spec/network-proxy.md §8.3, sandbox/transparent):
// bwrap starts the inner stage with CAP_NET_ADMIN, CAP_NET_BIND_SERVICE and
// CAP_SETPCAP (hostProxy.capArgs) and /dev/net/tun bound in. This stage sets the
// capture up, drops every capability (bounding set included, securebits locked so
// root regains none on exec), and re-executes itself as the ordinary inner stage with
// the two descriptors; that stage holds no capability on any thread, which its
// §3.8 step 2 check verifies as always. Any failure ends the launch (exit 101): the
// command never runs without the capture.

import (
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/execlab/executor/sandbox/transparent"
)

func runTransparentSetup(a *stageArgs) int {
	runtime.LockOSThread() // capabilities are per thread; this one execs
	if err := ensureLoopbackUp(); err != nil {
		return stageFail(exitPanic, msgTransparentPrefix+err.Error())
	}
	tunFD, err := unix.Open(tunDevice, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return stageFail(exitPanic, msgTransparentPrefix+"opening "+tunDevice+": "+err.Error())
	}
	dnsFD, err := transparent.Setup(tunFD)
	if err != nil {
		return stageFail(exitPanic, msgTransparentPrefix+err.Error())
	}
	for _, fd := range []int{tunFD, dnsFD} {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			return stageFail(exitPanic, msgTransparentPrefix+"keeping descriptors: "+err.Error())
		}
	}
	if err := dropAllCaps(); err != nil {
		return stageFail(exitPanic, msgTransparentPrefix+err.Error())
	}
	if held, err := capsRetained(); err != nil || held {
		return stageFail(exitBuildFailure, msgRetainedCaps)
	}
	next := *a
	next.transparentSetup = false
	next.transparentFDs = []int{tunFD, dnsFD}
	argv := append([]string{StageArgv0, StageFlag}, next.encode()...)
	err = unix.Exec("/proc/self/exe", argv, os.Environ())
	return stageFail(exitPanic, msgTransparentPrefix+"re-executing the inner stage: "+err.Error())
}
