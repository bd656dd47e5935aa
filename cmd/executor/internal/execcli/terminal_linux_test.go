//go:build linux

package execcli

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// openPty returns a terminal (the slave side of a fresh PTY) in its default cooked mode.
func openPty(t *testing.T) *os.File {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slave.Close(); master.Close() })
	if err := pty.Setsize(slave, &pty.Winsize{Rows: 33, Cols: 77, X: 10, Y: 20}); err != nil {
		t.Fatal(err)
	}
	return slave
}

func lflag(t *testing.T, f *os.File) uint32 {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return tio.Lflag
}

func TestTerminal_RestoredAfterPanic(t *testing.T) {
	tty := openPty(t)
	before := lflag(t, tty)
	term := &terminal{fd: -1}
	if err := term.makeRaw(int(tty.Fd())); err != nil {
		t.Fatal(err)
	}
	if lflag(t, tty)&unix.ICANON != 0 || !term.isRaw() {
		t.Fatal("makeRaw left ICANON on")
	}
	var recovered any
	func() {
		defer func() { recovered = recover() }()
		defer term.restoreOnPanic()
		panic("boom")
	}()
	if recovered != "boom" {
		t.Fatalf("restoreOnPanic swallowed the panic: recovered %v, want boom", recovered)
	}
	if got := lflag(t, tty); got != before {
		t.Fatalf("lflag after panic = %#x, want %#x (restored)", got, before)
	}
	term.restore() // idempotent
	if term.isRaw() {
		t.Fatal("isRaw after restore")
	}
}

func TestTermSize_AndIsTerminal(t *testing.T) {
	tty := openPty(t)
	s, err := termSize(int(tty.Fd()))
	if err != nil || s.Rows != 33 || s.Cols != 77 || s.PixelWidth != 10 || s.PixelHeight != 20 {
		t.Fatalf("termSize = %+v, %v; want 33x77 (10x20 px)", s, err)
	}
	if !IsTerminal(int(tty.Fd())) {
		t.Fatal("IsTerminal(pty) = false")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if IsTerminal(int(r.Fd())) {
		t.Fatal("IsTerminal(pipe) = true")
	}
}

// TestCancelableReader_CancelEndsPendingRead: the stdin read of a finished command ends
// without input, and the fd's flags (shared with the local shell) stay blocking.
func TestCancelableReader_CancelEndsPendingRead(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	cr, err := newCancelableReader(r)
	if err != nil {
		t.Fatal(err)
	}
	defer cr.Close()
	if _, err := w.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if n, err := cr.Read(buf); err != nil || !bytes.Equal(buf[:n], []byte("abc")) {
		t.Fatalf("Read = %q, %v; want abc", buf[:n], err)
	}
	done := make(chan error, 1)
	go func() { _, err := cr.Read(buf); done <- err }()
	cr.Cancel()
	select {
	case err := <-done:
		if err != errCanceled {
			t.Fatalf("Read after Cancel = %v, want errCanceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Cancel did not end the pending Read")
	}
	fl, err := unix.FcntlInt(r.Fd(), unix.F_GETFL, 0)
	if err != nil || fl&unix.O_NONBLOCK != 0 {
		t.Fatalf("stdin flags = %#x, %v; want blocking", fl, err)
	}
	w.Close()
	cr2, _ := newCancelableReader(r)
	defer cr2.Close()
	if _, err := cr2.Read(buf); err != errEOF {
		t.Fatalf("Read at EOF = %v, want EOF", err)
	}
}
