package refbin

import (
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"testing"
)

// Ports for processes that must be told their address before they start (a chaos proxy the
// registry's public URL points at, registry nodes that advertise themselves, prometheus,
// -L listeners). They come from below the kernel's ephemeral range (ip_local_port_range
// starts at 32768 by default): a port picked from ":0" and closed again is in that range,
// where any outgoing connection of any process may take it before the child binds it; CI
// lost a run to exactly that ("bind: address already in use"). Below the range only an
// explicit bind takes a port, and within one test binary no port is handed out twice.
const (
	freePortLow  = 20000
	freePortHigh = 32000
)

var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

// FreeAddr returns a loopback address (127.0.0.1:PORT) whose port is outside the
// ephemeral range, was free a moment ago, and has not been returned before in this test
// binary.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = make(map[int]bool)
	}
	for range 200 {
		port := freePortLow + rand.IntN(freePortHigh-freePortLow)
		if handedOut.ports[port] {
			continue
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		ln.Close()
		handedOut.ports[port] = true
		return addr
	}
	tb.Fatalf("no free loopback port in [%d, %d) after 200 tries", freePortLow, freePortHigh)
	return ""
}
