package protocol_test

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// arrivalOutcome is what the server makes of one message: the envelope scan's result
// and the params decode (handle, offset, chunk bytes, or the error text).
type arrivalOutcome struct {
	root    jsonwire.Root
	scanErr string
	handle  string
	offset  uint64
	data    []byte
	err     string
}

// decodeArriving feeds msg to a WriteBlockArrival in pieces of step bytes (as a
// transport's reads would), then scans and decodes it with what the Arrival handed over
// (early = true) or without (early = false, the path every message took before). It
// also reports whether the params used the Arrival's bytes.
func decodeArriving(t testing.TB, msg []byte, step int, early bool) (arrivalOutcome, bool) {
	t.Helper()
	var a protocol.WriteBlockArrival
	for n := step; n < len(msg); n += step {
		a.Seen(msg[:n])
	}
	known, value, _ := a.Arrived(msg)
	if !early {
		known, value = jsonwire.KnownString{}, nil
	}
	var out arrivalOutcome
	root, err := jsonwire.ScanRootKnown(msg, []string{"params"}, nil, known)
	if err != nil {
		out.scanErr = err.Error()
		return out, false
	}
	out.root = root
	if len(root.Members) != 1 {
		return out, false
	}
	var p protocol.FsWriteBlockParams
	params := root.Members[0]
	raw := msg[params.Start:params.End]
	var inParams jsonwire.KnownString // what jsonrpc.Message.ParamsKnown gives
	if known.End > 0 && params.Start < known.Start && known.End < params.End {
		inParams = jsonwire.KnownString{Start: known.Start - params.Start, End: known.End - params.Start}
	}
	if err := protocol.WithEarly(value, func() error { return jsonwire.UnmarshalCheckedParamsKnown(raw, &p, inParams) }); err != nil {
		out.err = err.Error()
		return out, false
	}
	out.handle, out.offset, out.data = p.HandleID, p.Offset, bytes.Clone(p.Chunk.Data)
	ed := protocol.EarlyData(value)
	adopted := len(ed) > 0 && len(p.Chunk.Data) > 0 && &ed[0] == &p.Chunk.Data[0]
	p.Chunk.Release()
	return out, adopted
}

func writeBlockMessage(prefix, chunk, suffix string) []byte {
	return []byte(prefix + chunk + suffix)
}

const (
	wbPrefix = `{"jsonrpc":"2.0","id":7,"method":"fs/writeBlock","params":{"handleId":"h","offset":3,"chunk":"`
	wbSuffix = `"}}`
)

func randomBlock(n int, seed byte) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{seed}).Read(b)
	return b
}

// TestWriteBlockArrival_SameOutcome: every message gets from the early path exactly what
// it gets without it (data, or the error text), and a valid block of the sizes a client
// streams is taken from the Arrival, not decoded twice.
func TestWriteBlockArrival_SameOutcome(t *testing.T) {
	block := randomBlock(1<<20, 1)
	full := base64.StdEncoding.EncodeToString(block)
	small := base64.StdEncoding.EncodeToString(block[:40<<10])
	withSymbol := func(s string, i int, c byte) string { b := []byte(s); b[i] = c; return string(b) }
	cases := []struct {
		name  string
		msg   []byte
		taken bool // the params must use the Arrival's bytes
	}{
		{"1 MiB block", writeBlockMessage(wbPrefix, full, wbSuffix), true},
		{"40 KiB block", writeBlockMessage(wbPrefix, small, wbSuffix), true},
		{"1 MiB less one byte (one pad)", writeBlockMessage(wbPrefix, base64.StdEncoding.EncodeToString(block[:1<<20-1]), wbSuffix), true},
		{"chunk first, method last", []byte(`{"id":7,"params":{"chunk":"` + small + `","offset":3,"handleId":"h"},"method":"fs/writeBlock"}`), false},
		{"chunk first, method first", []byte(`{"id":7,"method":"fs/writeBlock","params":{"chunk":"` + small + `","offset":3,"handleId":"h"}}`), true},
		{"whitespace around the chunk key", []byte(`{"id":7,"method":"fs/writeBlock","params":{"handleId":"h","offset":3,"chunk" : "` + small + `"}}`), false},
		{"more than a block", writeBlockMessage(wbPrefix, base64.StdEncoding.EncodeToString(append(bytes.Clone(block), 1, 2, 3, 4)), wbSuffix), false},
		{"bad symbol at the start", writeBlockMessage(wbPrefix, withSymbol(small, 0, '!'), wbSuffix), false},
		{"bad symbol in the middle", writeBlockMessage(wbPrefix, withSymbol(full, 700001, '!'), wbSuffix), false},
		{"bad symbol at the end", writeBlockMessage(wbPrefix, withSymbol(full, len(full)-3, '!'), wbSuffix), false},
		{"padding in the middle", writeBlockMessage(wbPrefix, small[:20000]+"QQ=="+small[20004:], wbSuffix), false},
		{"unpadded tail", writeBlockMessage(wbPrefix, strings.TrimRight(full, "="), wbSuffix), false},
		{"non-zero trailing bits", writeBlockMessage(wbPrefix, withSymbol(full, len(full)-3, 'B'), wbSuffix), false},
		{"escaped slash in the chunk", writeBlockMessage(wbPrefix, strings.Replace(small, "/", `\/`, 1), wbSuffix), false},
		{"line break escape in the chunk", writeBlockMessage(wbPrefix, small[:30000]+`\n`+small[30000:], wbSuffix), false},
		{"a second chunk key", []byte(`{"id":7,"method":"fs/writeBlock","params":{"handleId":"h","offset":3,"chunk":"` + small + `","chunk":"QQ=="}}`), false},
		{"chunk key in another object", []byte(`{"id":7,"method":"fs/writeBlock","trace":{"chunk":"` + small + `"},"params":{"handleId":"h","offset":3,"chunk":"QQ=="}}`), false},
		{"params that are not an object", []byte(`{"id":7,"method":"fs/writeBlock","params":["chunk":"` + small + `"]}`), false},
		{"other method", []byte(`{"id":7,"method":"fs/writeFile","params":{"handleId":"h","offset":3,"chunk":"` + small + `"}}`), false},
		{"truncated message", []byte(wbPrefix + small), false},
		{"trailing garbage (jsonrpc.Parse rejects it after the scan)", writeBlockMessage(wbPrefix, small, wbSuffix+"x"), true},
		{"bad offset after a good chunk", []byte(`{"id":7,"method":"fs/writeBlock","params":{"handleId":"h","chunk":"` + small + `","offset":"3"}}`), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, step := range []int{1 << 10, 7 << 10, 64 << 10, 1 << 30} {
				want, _ := decodeArriving(t, tc.msg, step, false)
				got, taken := decodeArriving(t, tc.msg, step, true)
				if got.scanErr != want.scanErr || got.err != want.err || got.handle != want.handle || got.offset != want.offset || !bytes.Equal(got.data, want.data) || got.root.End != want.root.End {
					t.Fatalf("step %d: early path differs:\n got scan %q params %q data %d bytes\nwant scan %q params %q data %d bytes", step, got.scanErr, got.err, len(got.data), want.scanErr, want.err, len(want.data))
				}
				if taken != tc.taken {
					t.Errorf("step %d: params took the early decode = %v, want %v (outcome %q %q)", step, taken, tc.taken, got.scanErr, got.err)
				}
			}
		})
	}
}

// TestWriteBlockArrival_ReadFailure: a message whose read fails hands nothing over and
// the Arrival is ready for the next one.
func TestWriteBlockArrival_ReadFailure(t *testing.T) {
	msg := writeBlockMessage(wbPrefix, base64.StdEncoding.EncodeToString(randomBlock(64<<10, 2)), wbSuffix)
	var a protocol.WriteBlockArrival
	a.Seen(msg[:len(msg)/2])
	if known, v, held := a.Arrived(nil); known != (jsonwire.KnownString{}) || v != nil || held != 0 {
		t.Fatalf("failed read handed over %v %v", known, v)
	}
	a.Seen(msg[:len(msg)/2])
	known, v, held := a.Arrived(msg)
	if held < 64<<10 {
		t.Errorf("held = %d, want at least the 64 KiB decoded", held)
	}
	if known.Start != len(wbPrefix) || known.End != len(msg)-len(wbSuffix) || len(protocol.EarlyData(v)) != 64<<10 {
		t.Fatalf("next message: known %+v, %d early bytes", known, len(protocol.EarlyData(v)))
	}
}

// FuzzWriteBlockArrival: for any chunk text (valid base64 of a random block with one
// byte changed, or not), any text after it and any read size, the early path gives the
// outcome the message gets without it.
func FuzzWriteBlockArrival(f *testing.F) {
	f.Add(uint16(20000), uint32(0), byte(0), uint16(4096), `"}}`)
	f.Add(uint16(30000), uint32(17), byte('!'), uint16(1000), `"}}`)
	f.Add(uint16(30001), uint32(40000), byte('='), uint16(65535), `"}}`)
	f.Add(uint16(24576), uint32(5), byte('\\'), uint16(777), `","offset":1}}`)
	f.Add(uint16(16385), uint32(21846), byte('"'), uint16(512), `"}`)
	f.Fuzz(func(t *testing.T, n uint16, at uint32, c byte, step uint16, suffix string) {
		chunk := []byte(base64.StdEncoding.EncodeToString(randomBlock(int(n)+12<<10, byte(n))))
		if c != 0 {
			chunk[int(at)%len(chunk)] = c
		}
		msg := writeBlockMessage(wbPrefix, string(chunk), suffix)
		st := max(int(step), 512)
		want, _ := decodeArriving(t, msg, st, false)
		got, _ := decodeArriving(t, msg, st, true)
		if got.scanErr != want.scanErr || got.err != want.err || got.handle != want.handle || got.offset != want.offset || !bytes.Equal(got.data, want.data) || got.root.End != want.root.End {
			t.Fatalf("early path differs: got %q %q (%d bytes), want %q %q (%d bytes)", got.scanErr, got.err, len(got.data), want.scanErr, want.err, len(want.data))
		}
	})
}
