package harness

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
)

// TestUnreachable_Classifies: a refused connection and a name that does not exist end a
// first connection at once; an offline environment, a name server that did not answer and
// other transport errors keep the first connection's retry window.
func TestUnreachable_Classifies(t *testing.T) {
	refused := &ConnectError{Retryable: true, Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"refused", refused, true},
		{"refused wrapped", fmt.Errorf("dialing rendezvous: %w", refused), true},
		{"no such host", &ConnectError{Retryable: true, Err: &net.DNSError{Err: "no such host", Name: "regsitry.example", IsNotFound: true}}, true},
		{"dns timeout", &ConnectError{Retryable: true, Err: &net.DNSError{Err: "i/o timeout", Name: "registry.example", IsTimeout: true}}, false},
		{"environment offline", &ConnectError{Status: 409, Code: "environment_offline", Retryable: true}, false},
		{"reset", &ConnectError{Retryable: true, Err: syscall.ECONNRESET}, false},
		{"other", errors.New("boom"), false},
	} {
		if got := unreachable(tt.err); got != tt.want {
			t.Errorf("%s: unreachable(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
