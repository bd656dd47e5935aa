//go:build unix

package remote

import (
	"io"
	"os"
	"testing"
)

// TestStdinPump_OSPipeIsInterruptible: a pipe stdin is re-opened on the runtime poller, so
// close interrupts the pump's blocked read and waits for it; the original descriptor is left
// usable (blocking) afterwards.
func TestStdinPump_OSPipeIsInterruptible(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	in := openStdin(r, true)
	if !in.src.waitable {
		t.Fatal("pipe stdin: got not waitable, want the pollable re-open")
	}
	pumpAndClose(t, in)
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(r, b); err != nil || b[0] != 'x' {
		t.Errorf("original stdin after close: got %q, %v; want x", b, err)
	}
}
