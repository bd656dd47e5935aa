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
// (/proc/self/exe) with GuardArg, a re-entry point the binary's reexec.Main dispatches.
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
		if !waitGuardedGone(groups, guardGrace) {
			killGuarded(groups, syscall.SIGKILL)
		}
	}
	if notice != nil {
		notice.post() // after the kill: "its processes are gone" is then true
	}
	return 0
}

// waitGuardedGone waits up to grace for every process of the tracked groups (as
// killGuarded finds them) to be gone, polling every guardPoll; it reports whether they
// are. Most processes die of the SIGTERM at once, so the exit notice need not wait the
// whole grace (a zombie never reaped by its new parent counts as alive: then the grace is
// spent, as before).
func waitGuardedGone(groups map[int]int, grace time.Duration) bool {
	deadline := time.Now().Add(grace)
	for {
		if !anyGuardedAlive(groups) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(guardPoll)
	}
}

// anyGuardedAlive reports whether a process whose process group or session is tracked
// still exists.
func anyGuardedAlive(groups map[int]int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		if pgrp, sid, zombie, ok := procGroupSessionState(pid); ok && !zombie && (groups[pgrp] > 0 || groups[sid] > 0) {
			return true
		}
	}
	return false
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
	pgrp, sid, _, ok = procGroupSessionState(pid)
	return pgrp, sid, ok
}

// procGroupSessionState is procGroupSession plus whether pid is a zombie (state Z: dead,
// not yet reaped by its parent).
func procGroupSessionState(pid int) (pgrp, sid int, zombie, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false, false
	}
	f := strings.Fields(s[i+1:]) // state ppid pgrp session …
	if len(f) < 4 {
		return 0, 0, false, false
	}
	pgrp, err1 := strconv.Atoi(f[2])
	sid, err2 := strconv.Atoi(f[3])
	return pgrp, sid, f[0] == "Z", err1 == nil && err2 == nil
}
