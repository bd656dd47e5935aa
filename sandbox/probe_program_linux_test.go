package sandbox_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// readFrom dials addr (names through the sandbox's resolver; one address at a time,
// no Happy Eyeballs race) and reads to EOF.
func readFrom(addr string) string {
	d := net.Dialer{Timeout: 10 * time.Second, FallbackDelay: -1}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return errnoName(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil {
		return errnoName(err)
	}
	return strings.TrimSpace(string(b))
}

func errnoName(err error) string {
	var en unix.Errno
	if errors.As(err, &en) {
		return unix.ErrnoName(en)
	}
	return err.Error()
}

func report(err error) int {
	if err != nil {
		fmt.Println(errnoName(err))
	} else {
		fmt.Println("ok")
	}
	return 0
}

func runProbeProgram(name string, args []string) int {
	switch name {
	case "argv0":
		fmt.Println(os.Args[0])
		return 0
	case "status":
		b, _ := os.ReadFile("/proc/self/status")
		for _, line := range strings.Split(string(b), "\n") {
			for _, k := range []string{"CapEff:", "CapPrm:", "NoNewPrivs:", "Seccomp:"} {
				if strings.HasPrefix(line, k) {
					fmt.Println(strings.Join(strings.Fields(line), " "))
				}
			}
		}
		return 0
	case "tcp":
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err == nil {
			err = unix.Connect(fd, &unix.SockaddrInet4{Port: 9, Addr: [4]byte{127, 0, 0, 1}})
			if err == unix.ECONNREFUSED {
				err = nil // the socket and connect syscalls were allowed
			}
		}
		return report(err)
	case "unix-connect":
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err == nil {
			err = unix.Connect(fd, &unix.SockaddrUnix{Name: args[0]})
		}
		return report(err)
	case "vsock":
		_, err := unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM, 0)
		return report(err)
	case "unix-dgram-sendmsg":
		// The datagram-gap probe: sendmsg with a destination, no connect (issue 13).
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM, 0)
		if err == nil {
			err = unix.Sendmsg(fd, []byte("escaped"), nil, &unix.SockaddrUnix{Name: args[0]}, 0)
		}
		return report(err)
	case "socketpair":
		_, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		return report(err)
	case "io_uring":
		var params [120]byte
		_, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
		if e == 0 {
			return report(nil)
		}
		return report(e)
	case "ptrace":
		_, _, e := unix.RawSyscall(unix.SYS_PTRACE, unix.PTRACE_TRACEME, 0, 0)
		if e == 0 {
			return report(nil)
		}
		return report(e)
	case "unix-socket":
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fd)
		}
		return report(err)
	case "dial":
		c, err := net.Dial("tcp", args[0])
		if err == nil {
			c.Close()
		}
		return report(err)
	case "read-from": // one line per address: what a direct connection reads, or its error
		for _, addr := range args {
			fmt.Println(addr, readFrom(addr))
		}
		return 0
	case "tunsetiff": // what the command can do with the tun device bound for the setup
		fd, err := unix.Open("/dev/net/tun", unix.O_RDWR, 0)
		if err == nil {
			defer unix.Close(fd)
			for _, name := range []string{"codextun", "othertun"} {
				ifr, _ := unix.NewIfreq(name)
				ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
				if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
					fmt.Println(name, errnoName(err))
				} else {
					fmt.Println(name, "ok")
				}
			}
			return 0
		}
		return report(err)
	case "proxy-env":
		var lines []string
		for _, kv := range os.Environ() {
			if k, _, _ := strings.Cut(kv, "="); strings.Contains(strings.ToLower(k), "proxy") && k != probeEnv {
				lines = append(lines, kv)
			}
		}
		sort.Strings(lines)
		fmt.Println(strings.Join(lines, "\n"))
		return 0
	case "proxy-get":
		return proxyGet(args[0])
	case "proxy-connect":
		return proxyConnect(os.Getenv(args[0]), args[1])
	case "write":
		return report(os.WriteFile(args[0], []byte("x"), 0o644))
	case "mkdir":
		return report(os.Mkdir(args[0], 0o755))
	case "read":
		_, err := os.ReadFile(args[0])
		return report(err)
	case "rename-then-write":
		// rename args[0] to args[1], recreate args[0]/args[2]'s parent chain, then write
		// args[0]/args[2]: the ancestor-rename attack on a read-only carve-out.
		if err := os.Rename(args[0], args[1]); err != nil {
			return report(err)
		}
		f := filepath.Join(args[0], args[2])
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return report(err)
		}
		return report(os.WriteFile(f, []byte("x"), 0o644))
	}
	fmt.Println("unknown probe", name)
	return 2
}

// proxyGet fetches target through the environment's HTTP proxy and prints the body.
func proxyGet(target string) int {
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyFromEnvironment}}
	resp, err := c.Get(target)
	if err != nil {
		return report(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Println(strings.TrimSpace(string(b)))
	return 0
}

// proxyConnect opens a CONNECT tunnel to authority through proxyURL and prints the
// status line and the first line the tunnel carries.
func proxyConnect(proxyURL, authority string) int {
	u, err := url.Parse(proxyURL)
	if err != nil {
		return report(err)
	}
	c, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		return report(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", authority, authority)
	r := bufio.NewReader(c)
	status, err := r.ReadString('\n')
	if err != nil {
		return report(err)
	}
	for { // headers
		line, err := r.ReadString('\n')
		if err != nil {
			return report(err)
		}
		if line == "\r\n" {
			break
		}
	}
	fmt.Fprintf(c, "ping\n")
	reply, err := r.ReadString('\n')
	if err != nil {
		return report(err)
	}
	fmt.Println(strings.TrimSpace(status) + " | " + strings.TrimSpace(reply))
	return 0
}
