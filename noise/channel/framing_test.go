package channel

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

func frame(msg []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(msg))), msg...)
}

func TestForEachRecord_Sizes(t *testing.T) {
	var scratch [RecordPlaintextLen]byte
	for _, tc := range []struct {
		n    int
		want string
	}{
		{1, "[5]"},
		{61436, "[61440]"},
		{61437, "[61440 1]"},
		{128 << 10, "[61440 61440 8196]"},
		{359151, "[61440 61440 61440 61440 61440 51955]"},
	} {
		msg := bytes.Repeat([]byte{byte(tc.n)}, tc.n)
		var sizes []int
		var stream []byte
		err := forEachRecord(&scratch, msg, func(pt []byte) error {
			sizes = append(sizes, len(pt))
			stream = append(stream, pt...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(sizes); got != tc.want {
			t.Errorf("n=%d: sizes %s, want %s", tc.n, got, tc.want)
		}
		if len(sizes) != recordCount(tc.n) {
			t.Errorf("n=%d: recordCount = %d, want %d", tc.n, recordCount(tc.n), len(sizes))
		}
		if !bytes.Equal(stream, frame(msg)) {
			t.Errorf("n=%d: framed stream differs", tc.n)
		}
	}
}

func TestReassembler_Splits(t *testing.T) {
	a, b := []byte(`{"a":1}`), bytes.Repeat([]byte("b"), 359151)
	stream := append(append(frame(a), frame(b)...), frame(a)...)
	// Cut the stream at every chunk size in the table; the messages must come back.
	for _, chunk := range []int{1, 2, 3, 4, 5, 7, 11, 4096, 61439, 61440} {
		var r reassembler
		var got [][]byte
		for off := 0; off < len(stream); off += chunk {
			var err error
			rec := bytes.Clone(stream[off:min(off+chunk, len(stream))])
			var kept bool
			got, kept, err = r.feed(got, rec)
			if !kept {
				clear(rec) // a record not kept is free: reusing it must not touch any message
			}
			if err != nil {
				t.Fatalf("chunk %d: %v", chunk, err)
			}
		}
		if len(got) != 3 || !bytes.Equal(got[0], a) || !bytes.Equal(got[1], b) || !bytes.Equal(got[2], a) {
			t.Fatalf("chunk %d: got %d messages, want 3 intact", chunk, len(got))
		}
		if r.buffered() != 0 {
			t.Fatalf("chunk %d: %d bytes left buffered", chunk, r.buffered())
		}
	}
}

func TestReassembler_MessagesDoNotOverlap(t *testing.T) {
	var r reassembler
	msgs, _, err := r.feed(nil, append(frame([]byte("ab")), frame([]byte("cd"))...))
	if err != nil || len(msgs) != 2 {
		t.Fatalf("got %d messages, %v", len(msgs), err)
	}
	msgs[0] = append(msgs[0], 'X') // must not clobber the next message
	if string(msgs[1]) != "cd" {
		t.Fatalf("second message = %q after appending to the first, want cd", msgs[1])
	}
}

func TestReassembler_Rejects(t *testing.T) {
	max := binary.BigEndian.AppendUint32(nil, MaxMessageLen)
	for _, tc := range []struct {
		name    string
		records [][]byte
		want    error
	}{
		{"zero prefix", [][]byte{{0, 0, 0, 0}}, ErrZeroLengthMessage},
		{"zero prefix split", [][]byte{{0, 0}, {0}, {0}}, ErrZeroLengthMessage},
		{"64MiB+1 prefix only", [][]byte{binary.BigEndian.AppendUint32(nil, MaxMessageLen+1)}, ErrMessageTooLarge},
		{"max u32 prefix", [][]byte{{0xff, 0xff, 0xff, 0xff}}, ErrMessageTooLarge},
		{"record 61441", [][]byte{make([]byte, RecordPlaintextLen+1)}, ErrRecordTooLarge},
		{"64MiB prefix accepted", [][]byte{max}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r reassembler
			var err error
			for _, rec := range tc.records {
				if _, _, err = r.feed(nil, rec); err != nil {
					break
				}
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestReassembler_BoundedAllocation(t *testing.T) {
	// A bare 64 MiB prefix must not allocate 64 MiB up front.
	var r reassembler
	if _, _, err := r.feed(nil, append(binary.BigEndian.AppendUint32(nil, MaxMessageLen), 1)); err != nil {
		t.Fatal(err)
	}
	if c := cap(r.buf); c > initialSpanCap {
		t.Fatalf("cap after 1 body byte = %d, want ≤ %d", c, initialSpanCap)
	}
}

// TestReassembler_SpanRoom: records taken through spanRoom/spanFilled (decrypted straight
// onto the message, as Conn does) or feed, whichever applies, give back every message
// intact, whether records start with messages (as every sender cuts them) or are cut at
// random; spanRoom never accepts a record that crosses the end of the message.
func TestReassembler_SpanRoom(t *testing.T) {
	seed := uint64(5)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	var msgs [][]byte
	for _, n := range []int{7, 61436, 61437, 200 << 10, 3, 350 << 10, 500 << 10, 1} {
		m := make([]byte, n)
		for i := range m {
			m[i] = byte(rng.Uint32())
		}
		msgs = append(msgs, m)
	}
	for _, random := range []bool{false, true} {
		var records [][]byte
		if random {
			var stream []byte
			for _, m := range msgs {
				stream = append(stream, frame(m)...)
			}
			for off := 0; off < len(stream); {
				k := min(1+rng.IntN(RecordPlaintextLen), len(stream)-off)
				records = append(records, stream[off:off+k])
				off += k
			}
		} else {
			var scratch [RecordPlaintextLen]byte
			for _, m := range msgs {
				_ = forEachRecord(&scratch, m, func(pt []byte) error {
					records = append(records, bytes.Clone(pt))
					return nil
				})
			}
		}
		var r reassembler
		var got [][]byte
		direct := 0
		for _, rec := range records {
			if dst, ok := r.spanRoom(len(rec)); ok {
				if len(rec) > r.want-len(r.buf) {
					t.Fatalf("spanRoom accepted %d bytes with %d left in the message", len(rec), r.want-len(r.buf))
				}
				got = r.spanFilled(got, append(dst, rec...))
				direct++
				continue
			}
			var err error
			if got, _, err = r.feed(got, bytes.Clone(rec)); err != nil {
				t.Fatal(err)
			}
		}
		if len(got) != len(msgs) {
			t.Fatalf("random cuts %v: got %d messages, want %d", random, len(got), len(msgs))
		}
		for i := range msgs {
			if !bytes.Equal(got[i], msgs[i]) {
				t.Fatalf("random cuts %v: message %d (%d bytes) differs", random, i, len(msgs[i]))
			}
		}
		if direct == 0 {
			t.Fatalf("random cuts %v: no record went straight onto a message", random)
		}
	}
}
