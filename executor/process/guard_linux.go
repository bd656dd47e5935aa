//go:build linux

package process

import (
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// StartGuard starts the process guard (see Guard) by re-entering the running binary
// (/proc/self/exe) with GuardArg; this package's init runs it there.
func StartGuard() (*Guard, error) {
	return startGuardWith("/proc/self/exe")
}

// guardSysProcAttr: the guard leads its own session, out of the reach of a terminal's
// Ctrl-C to the executor's group, and is not tied to the executor by Pdeathsig (it must
// outlive it).
func guardSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

func runGuard(stdin io.Reader) int {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	groups := map[int]int{}
	notice := readGuardLines(stdin, groups)
	if len(groups) > 0 {
		killGuarded(groups, syscall.SIGTERM)
		time.Sleep(guardGrace)
		killGuarded(groups, syscall.SIGKILL)
	}
	if notice != nil {
		notice.post() // after the kill: "its processes are gone" is then true
	}
	return 0
}

// killGuarded signals every tracked group, and every process whose process group or
// session is a tracked one (a child that moved to a group of its own inside the session).
func killGuarded(groups map[int]int, sig syscall.Signal) {
	for pgid := range groups {
		_ = syscall.Kill(-pgid, sig)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		pgrp, sid, ok := procGroupSession(pid)
		if !ok {
			continue
		}
		if groups[pgrp] > 0 || groups[sid] > 0 {
			_ = syscall.Kill(pid, sig)
		}
	}
}

// procGroupSession reads the process group and session of pid from /proc/PID/stat
// (fields 5 and 6, after the parenthesised command name, which may contain spaces).
func procGroupSession(pid int) (pgrp, sid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:]) // state ppid pgrp session …
	if len(f) < 4 {
		return 0, 0, false
	}
	pgrp, err1 := strconv.Atoi(f[2])
	sid, err2 := strconv.Atoi(f[3])
	return pgrp, sid, err1 == nil && err2 == nil
}
