package sandbox_test

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/sandbox/sandboxtest"
)

// Security finding (issue 13): under network "restricted" the command could send a
// datagram to a host socket bound at a path it can see (the probe reached /dev/log):
// sendto is denied but sendmsg is not, and socket(AF_UNIX, SOCK_DGRAM) was allowed. The
// Restricted filter now refuses AF_UNIX datagram sockets, under both backends that
// install it. The host socket is the test's own, in a directory the profile makes
// readable; the probe sends with sendmsg and a destination address, without connect.
func TestSeccompRestricted_HostDatagramSocketUnreachable(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "dgram.sock")
	pc, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	for _, backend := range []string{sandbox.BackendBubblewrap, sandbox.BackendLandlock} {
		t.Run(backend, func(t *testing.T) {
			l := sandboxtest.Launcher(t, backend)
			// Control: network enabled (no seccomp socket rules) reaches the socket, so
			// the probe itself works.
			ctl := managedCtx("enabled", entryJSON(specialJSON("root"), "read"))
			if res := probeRun(t, l, ctl, "/", "unix-dgram-sendmsg", sock); strings.TrimSpace(res.stdout) != "ok" {
				t.Fatalf("control (network enabled): stdout %q, stderr %q", res.stdout, res.stderr)
			}
			if got := readDatagram(t, pc); got != "escaped" {
				t.Fatalf("control datagram = %q, want %q", got, "escaped")
			}
			ctx := managedCtx("restricted", entryJSON(specialJSON("root"), "read"))
			res := probeRun(t, l, ctx, "/", "unix-dgram-sendmsg", sock)
			if got := strings.TrimSpace(res.stdout); got != "EPERM" {
				t.Errorf("restricted: probe said %q (stderr %q), want the socket refused with EPERM", got, res.stderr)
			}
			if got := readDatagram(t, pc); got != "" {
				t.Errorf("the sandboxed command delivered %q to the host socket", got)
			}
		})
	}
}

// readDatagram returns the next datagram, or "" if none arrives within 300 ms.
func readDatagram(t *testing.T, pc *net.UnixConn) string {
	t.Helper()
	if err := pc.SetReadDeadline(time.Now().Add(300 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 512)
	n, _, err := pc.ReadFromUnix(buf)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}
