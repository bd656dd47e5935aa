package channel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// FuzzReorder drives the reorder buffer with arbitrary (seq, size) operations and checks
// its invariants: releases are consecutive from 0, each seq at most once, and the
// record and byte bounds hold.
func FuzzReorder(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 2, 0})
	f.Add([]byte{2, 0, 1, 0, 0, 0, 1, 0})
	f.Add([]byte{64, 0, 65, 0})
	f.Add([]byte{1, 255, 2, 255, 3, 255, 0, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var r reorderBuffer
		next := uint64(0)
		for i := 0; i+1 < len(ops); i += 2 {
			// seq relative to the next expected one (may be stale), size in 4 KiB steps.
			seq := int64(next) + int64(int8(ops[i]))
			if seq < 0 {
				seq = 0
			}
			size := int(ops[i+1]) * 4096
			ready, err := r.push(nil, uint32(seq), rec(uint32(seq), max(size, 1)))
			if err != nil {
				if !errors.Is(err, ErrReorderWindow) && !errors.Is(err, ErrPendingFull) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			for _, p := range ready {
				if p[0] != byte(next) {
					t.Fatalf("released seq %d (low byte), want %d", p[0], byte(next))
				}
				next++
			}
			if r.next != next {
				t.Fatalf("next = %d, want %d", r.next, next)
			}
			if r.pendingBytes > MaxPendingBytes || r.pendingCount > ReorderWindow {
				t.Fatalf("bounds exceeded: %d bytes, %d records", r.pendingBytes, r.pendingCount)
			}
		}
	})
}

// parseModel parses a whole framed stream at once: the messages, the bytes of an
// incomplete tail, and the first error.
func parseModel(stream []byte) (msgs [][]byte, err error) {
	for len(stream) >= LengthPrefixLen {
		n := binary.BigEndian.Uint32(stream)
		switch {
		case n == 0:
			return msgs, ErrZeroLengthMessage
		case n > MaxMessageLen:
			return msgs, ErrMessageTooLarge
		}
		if uint64(len(stream)-LengthPrefixLen) < uint64(n) {
			return msgs, nil
		}
		msgs = append(msgs, stream[LengthPrefixLen:LengthPrefixLen+int(n)])
		stream = stream[LengthPrefixLen+int(n):]
	}
	return msgs, nil
}

// FuzzReassembler feeds a framed stream cut into records at fuzzed sizes and compares
// the result with parsing the whole stream at once.
func FuzzReassembler(f *testing.F) {
	two := append(frame([]byte(`{"a":1}`)), frame([]byte(`{"b":2}`))...)
	f.Add(two, []byte{0})
	f.Add(two, []byte{1, 2, 3})
	f.Add([]byte{0, 0, 0, 0}, []byte{1})
	f.Add([]byte{0, 0, 0, 2, 'a'}, []byte{255})
	f.Add(binary.BigEndian.AppendUint32(nil, MaxMessageLen+1), []byte{2})
	f.Fuzz(func(t *testing.T, stream, cuts []byte) {
		want, wantErr := parseModel(stream)
		var r reassembler
		var got [][]byte
		var err error
		for off, i := 0, 0; off < len(stream) && err == nil; i++ {
			size := 1
			if len(cuts) > 0 {
				size += int(cuts[i%len(cuts)])
			}
			end := min(off+size, len(stream))
			rec := bytes.Clone(stream[off:end])
			var kept bool
			if dst, ok := r.spanRoom(len(rec)); ok && i%2 == 0 {
				// As Conn does with a record that all continues the message (every
				// other time, so feed sees such records too).
				got = r.spanFilled(got, append(dst, rec...))
				off = end
				continue
			}
			got, kept, err = r.feed(got, rec)
			if !kept {
				clear(rec) // a record not kept is free: reusing it must not touch any message
			}
			off = end
		}
		if !errors.Is(err, wantErr) || (err == nil) != (wantErr == nil) {
			t.Fatalf("error %v, want %v", err, wantErr)
		}
		if len(got) < len(want) && err == nil {
			t.Fatalf("%d messages, want %d", len(got), len(want))
		}
		for i := range min(len(got), len(want)) {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("message %d differs", i)
			}
		}
		if r.buffered() > MaxReassemblyLen {
			t.Fatalf("buffered %d bytes", r.buffered())
		}
	})
}

var genSeeds = flag.Bool("gen-seeds", false, "rewrite testdata/fuzz seed corpora")

func TestGenerateFuzzSeeds(t *testing.T) {
	if !*genSeeds {
		return
	}
	two := append(frame([]byte(`{"a":1}`)), frame([]byte(`{"b":2}`))...)
	big := frame(bytes.Repeat([]byte("x"), 70000))
	write := func(name string, i int, args ...[]byte) {
		dir := filepath.Join("testdata", "fuzz", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := "go test fuzz v1\n"
		for _, a := range args {
			body += "[]byte(" + strconv.Quote(string(a)) + ")\n"
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("FuzzReassembler", 0, two, []byte{0})
	write("FuzzReassembler", 1, two, []byte{3, 1})
	write("FuzzReassembler", 2, big, []byte{255})
	write("FuzzReassembler", 3, []byte{0, 0, 0, 0}, []byte{1})
	write("FuzzReassembler", 4, binary.BigEndian.AppendUint32(nil, MaxMessageLen+1), []byte{0})
	write("FuzzReorder", 0, []byte{0, 0, 1, 0, 2, 0})
	write("FuzzReorder", 1, []byte{3, 1, 2, 1, 1, 1, 0, 1, 0xff, 1})
	write("FuzzReorder", 2, []byte{64, 0, 65, 0})
	write("FuzzReorder", 3, bytes.Repeat([]byte{1, 60}, 20))
}
