package serve_test

import (
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"testing"

	"github.com/execlab/executor/cmd/executor/internal/serve"
)

func TestParseProcAddr(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
	}{
		{"0100007F:1F90", "127.0.0.1:8080"},
		{"00000000000000000000000001000000:0016", "[::1]:22"},
		{"0000000000000000FFFF00000100007F:A537", "127.0.0.1:42295"}, // v4-mapped → unmapped
	} {
		got, ok := serve.ParseProcAddrForTest(tt.in)
		if !ok || got.String() != tt.want {
			t.Errorf("parseProcAddr(%q) = %v %v, want %s", tt.in, got, ok, tt.want)
		}
	}
	for _, bad := range []string{"", "0100007F", "0100007:1F90", "zz00007F:1F90", "0100007F:fffff"} {
		if _, ok := serve.ParseProcAddrForTest(bad); ok {
			t.Errorf("parseProcAddr(%q) accepted", bad)
		}
	}
}

// TestSandboxedPeer_UnsandboxedClient: a connection from this (unsandboxed) process is
// found in /proc/net/tcp but belongs to no sandboxed descendant.
func TestSandboxedPeer_UnsandboxedClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	local := s.LocalAddr().(*net.TCPAddr).AddrPort()
	remote := netip.MustParseAddrPort(s.RemoteAddr().String())
	pid, err := serve.SandboxedPeerForTest(local, remote)
	if err != nil || pid != 0 {
		t.Fatalf("sandboxedPeer = %d, %v; want 0, nil", pid, err)
	}
	// The client end's inode is found, and it is the socket this process holds as c.
	inode, err := serve.SocketInodeForTest(local, remote)
	if err != nil || inode == "" {
		t.Fatalf("socketInode = %q, %v", inode, err)
	}
	f, err := c.(*net.TCPConn).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if want := strconv.FormatUint(st.Ino, 10); inode != want {
		t.Fatalf("socketInode = %s, want the client socket's %s", inode, want)
	}
}
