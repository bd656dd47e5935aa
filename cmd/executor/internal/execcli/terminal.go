package execcli

import (
	"bytes"
	"fmt"
	"io"
	"sync"
)

// terminal is the local terminal's mode: raw while a -t command runs, restored exactly
// once on every way out of Run (return, a panic in Run or in one of its goroutines, a
// lost connection). All methods are safe for concurrent use.
type terminal struct {
	fd int // -1: not in raw mode

	// mu guards undo and raw: restore may run from a panicking goroutine while Run
	// returns.
	mu   sync.Mutex
	undo func()
	raw  bool
}

// makeRaw puts fd in raw mode until restore.
func (t *terminal) makeRaw(fd int) error {
	undo, err := makeRaw(fd)
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.fd, t.undo, t.raw = fd, undo, true
	t.mu.Unlock()
	return nil
}

// isRaw reports whether output needs "\r\n" line ends (raw mode turns OPOST off).
func (t *terminal) isRaw() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.raw
}

// restore puts the terminal back as it was; idempotent.
func (t *terminal) restore() {
	t.mu.Lock()
	undo := t.undo
	t.undo, t.raw = nil, false
	t.mu.Unlock()
	if undo != nil {
		undo()
	}
}

// restoreOnPanic is deferred by every goroutine of Run: a panic there would end the
// program without running Run's defers, so it restores the terminal and panics on.
func (t *terminal) restoreOnPanic() {
	if v := recover(); v != nil {
		t.restore()
		panic(v)
	}
}

// notes prints the CLI's own messages on stderr: once per kind for "not supported by
// this executor" fallbacks, with "\r\n" line ends while the terminal is raw. Safe for
// concurrent use.
type notes struct {
	w    io.Writer
	term *terminal

	// mu serialises writes and guards seen.
	mu   sync.Mutex
	seen map[string]bool
}

func (n *notes) printf(format string, args ...any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.writeLocked(fmt.Sprintf(format, args...))
}

// once prints msg the first time kind is seen.
func (n *notes) once(kind, msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.seen[kind] {
		return
	}
	if n.seen == nil {
		n.seen = map[string]bool{}
	}
	n.seen[kind] = true
	n.writeLocked(msg)
}

func (n *notes) writeLocked(s string) {
	if n.w == nil {
		return
	}
	b := []byte(s)
	if n.term.isRaw() {
		b = bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
	}
	_, _ = n.w.Write(b)
}
