package execcli

import (
	"bytes"
	"testing"
)

func TestNotes_OnceAndRawLineEnds(t *testing.T) {
	var buf bytes.Buffer
	term := &terminal{fd: -1}
	n := &notes{w: &buf, term: term}
	n.once("eof", "a\n")
	n.once("eof", "a\n")
	term.raw = true // as makeRaw leaves it
	n.once("size", "b\n")
	n.printf("c %d\n", 1)
	if got, want := buf.String(), "a\nb\r\nc 1\r\n"; got != want {
		t.Fatalf("notes wrote %q, want %q", got, want)
	}
}
