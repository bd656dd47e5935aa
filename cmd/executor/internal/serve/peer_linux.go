package serve

// Who holds the other end of a loopback connection (Linux /proc):
//
//	/proc/<pid>/stat       ppid → the executor's descendants
//	/proc/<pid>/ns/{user,pid}, /proc/<pid>/status Seccomp_filters
//	                       → is the descendant confined by a sandbox?
//	/proc/net/tcp{,6}      local/remote address pair → socket inode of the client end
//	/proc/<pid>/fd/*       "socket:[inode]" → which sandboxed descendant holds it
//
// The fd scan only runs when a sandboxed descendant exists, and only over those.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// sandboxedPeer reports the pid of a sandboxed descendant of this process that holds the
// client end of the loopback TCP connection remote→local, or 0 when there is none. An
// error means /proc could not be read; callers fail open (this is a best-effort guard;
// --ws-auth is the guarantee).
func sandboxedPeer(local, remote netip.AddrPort) (int, error) {
	if !remote.Addr().IsLoopback() {
		return 0, nil
	}
	self := os.Getpid()
	desc, err := descendants(self)
	if err != nil {
		return 0, err
	}
	me := confinementOf(self)
	var boxed []int
	for _, pid := range desc {
		if confinementOf(pid).tighterThan(me) {
			boxed = append(boxed, pid)
		}
	}
	if len(boxed) == 0 {
		return 0, nil
	}
	inode, err := socketInode(local, remote)
	if err != nil || inode == "" {
		return 0, err
	}
	want := "socket:[" + inode + "]"
	budget := MaxPeerScanFDs
	for _, pid := range boxed {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd"
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue // exited, or not ours to inspect
		}
		for _, e := range ents {
			if budget--; budget < 0 {
				return 0, errors.New("peer scan: descriptor budget exhausted")
			}
			if l, err := os.Readlink(dir + "/" + e.Name()); err == nil && l == want {
				return pid, nil
			}
		}
	}
	return 0, nil
}

// descendants lists every process below pid (children, grandchildren, …), from the ppid
// fields of /proc/*/stat.
func descendants(pid int) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("listing /proc: %w", err)
	}
	children := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		// "pid (comm) state ppid …"; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		if pp, err := strconv.Atoi(f[1]); err == nil {
			children[pp] = append(children[pp], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out, nil
}

// confinement is what distinguishes a sandboxed process from its unsandboxed parent.
type confinement struct {
	userNS, pidNS  string // readlink of /proc/<pid>/ns/{user,pid}; "" when unreadable
	seccompFilters int    // Seccomp_filters (or the Seccomp mode on kernels before 5.9); -1 unknown
}

func confinementOf(pid int) confinement {
	p := "/proc/" + strconv.Itoa(pid)
	c := confinement{seccompFilters: -1}
	c.userNS, _ = os.Readlink(p + "/ns/user")
	c.pidNS, _ = os.Readlink(p + "/ns/pid")
	f, err := os.Open(p + "/status")
	if err != nil {
		return c
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch k {
		case "Seccomp_filters":
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				c.seccompFilters = n
				return c
			}
		case "Seccomp":
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				c.seccompFilters = n
			}
		}
	}
	return c
}

// tighterThan reports whether c is confined beyond parent: another user or pid namespace
// (bubblewrap), or more seccomp filters (every sandbox backend installs one).
func (c confinement) tighterThan(parent confinement) bool {
	return (c.userNS != "" && parent.userNS != "" && c.userNS != parent.userNS) ||
		(c.pidNS != "" && parent.pidNS != "" && c.pidNS != parent.pidNS) ||
		(c.seccompFilters >= 0 && parent.seccompFilters >= 0 && c.seccompFilters > parent.seccompFilters)
}

// socketInode finds the inode of the client's socket: local address = remote (the peer
// as this process sees it), remote address = local.
func socketInode(local, remote netip.AddrPort) (string, error) {
	var firstErr error
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		inode, err := findInode(file, remote, local)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if inode != "" {
			return inode, nil
		}
	}
	return "", firstErr
}

func findInode(file string, laddr, raddr netip.AddrPort) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", file, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) < 10 {
			continue
		}
		l, ok1 := parseProcAddr(fl[1])
		r, ok2 := parseProcAddr(fl[2])
		if ok1 && ok2 && l == laddr && r == raddr {
			return fl[9], nil
		}
	}
	return "", sc.Err()
}

// parseProcAddr parses "0100007F:1F90" (IPv4) or 32 hex digits + port (IPv6): each
// 32-bit word is printed in host byte order. IPv4-mapped IPv6 addresses are unmapped.
func parseProcAddr(s string) (netip.AddrPort, bool) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, false
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, false
	}
	raw, err := hex.DecodeString(h)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, false
	}
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(raw[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	a, ok := netip.AddrFromSlice(raw)
	if !ok {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(a.Unmap(), uint16(port)), true
}
