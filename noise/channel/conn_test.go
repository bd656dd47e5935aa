package channel_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/execlab/executor/noise"
	"github.com/execlab/executor/noise/channel"
)

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

func TestConn_FramingRecordSplit(t *testing.T) {
	peer, conn := newRawInitiator(t)
	ctx := testCtx(t)
	for _, tc := range []struct {
		n    int
		want []int // plaintext sizes of the records
	}{
		{1, []int{5}},
		{61436, []int{61440}},
		{61437, []int{61440, 1}},
		{128 << 10, []int{61440, 61440, 8196}},
		{359151, []int{61440, 61440, 61440, 61440, 61440, 51955}},
	} {
		msg := pattern(tc.n, byte(tc.n))
		errc := make(chan error, 1)
		go func() { errc <- conn.WriteMessage(ctx, msg) }()
		var got []int
		var stream []byte
		for range tc.want {
			pk, pt := peer.open(ctx)
			if pk.Seq != peer.recvSeq() {
				t.Fatalf("message %d: record seq %d, want %d", tc.n, pk.Seq, peer.recvSeq())
			}
			peer.recvCount++
			got = append(got, len(pt))
			stream = append(stream, pt...)
		}
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Fatalf("message of %d bytes: record sizes %v, want %v", tc.n, got, tc.want)
		}
		if !bytes.Equal(stream, framed(msg)) {
			t.Fatalf("message of %d bytes: framed bytes differ", tc.n)
		}
	}
}

// recvSeq is the seq the next record from the Conn must carry.
func (p *rawPeer) recvSeq() uint32 { return p.recvCount }

func TestConn_Reassembly(t *testing.T) {
	m1, m2, m3 := []byte(`{"a":1}`), []byte(`{"b":2}`), pattern(128<<10, 3)
	big := framed(m3)
	twoInOne := append(framed(m1), framed(m2)...)
	f4 := framed([]byte(`{"c":3}`))
	for _, tc := range []struct {
		name    string
		records [][]byte
		want    [][]byte
	}{
		{"two messages in one record", [][]byte{twoInOne}, [][]byte{m1, m2}},
		{"message across records", [][]byte{big[:61440], big[61440:122880], big[122880:]}, [][]byte{m3}},
		{"prefix split across records", [][]byte{f4[:2], f4[2:3], f4[3:]}, [][]byte{[]byte(`{"c":3}`)}},
		{"message ends mid-record, next begins", [][]byte{append(framed(m1), f4[:6]...), f4[6:]}, [][]byte{m1, []byte(`{"c":3}`)}},
		{"empty record between", [][]byte{framed(m1)[:3], {}, framed(m1)[3:]}, [][]byte{m1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			peer, conn := newRawInitiator(t)
			ctx := testCtx(t)
			for _, r := range tc.records {
				peer.deliver(peer.seal(r))
			}
			for i, want := range tc.want {
				got, err := conn.ReadMessage(ctx)
				if err != nil {
					t.Fatalf("message %d: %v", i, err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("message %d: got %d bytes, want %d", i, len(got), len(want))
				}
			}
		})
	}
}

func TestConn_RejectsLengths(t *testing.T) {
	tooBig := binary.BigEndian.AppendUint32(nil, channel.MaxMessageLen+1)
	for _, tc := range []struct {
		name   string
		record []byte
		want   error
	}{
		{"zero prefix", []byte{0, 0, 0, 0}, channel.ErrZeroLengthMessage},
		{"zero prefix after a message", append(framed([]byte("{}")), 0, 0, 0, 0), channel.ErrZeroLengthMessage},
		{"64MiB+1 prefix only", tooBig, channel.ErrMessageTooLarge},
		{"record 61441", append(binary.BigEndian.AppendUint32(nil, 100000), make([]byte, 61437)...), channel.ErrRecordTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			peer, conn := newRawInitiator(t)
			ctx := testCtx(t)
			peer.deliver(peer.seal(tc.record))
			var err error
			for err == nil {
				_, err = conn.ReadMessage(ctx)
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if _, err2 := conn.ReadMessage(ctx); !errors.Is(err2, tc.want) {
				t.Fatalf("second read: got %v, want the same sticky error", err2)
			}
		})
	}
	// Exactly 64 MiB declared is accepted while incomplete (no error yet); a ctx error
	// leaves the Conn usable. Virtual time, so the deadlines cost nothing.
	synctest.Test(t, func(t *testing.T) {
		peer, conn := newRawInitiator(t)
		peer.deliver(peer.seal(binary.BigEndian.AppendUint32(nil, channel.MaxMessageLen)))
		for i := range 2 {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			if _, err := conn.ReadMessage(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("read %d after a 64 MiB prefix: got %v, want to wait for more records", i, err)
			}
			cancel()
			peer.deliver(peer.seal(make([]byte, 16)))
		}
	})
}

func TestConn_WriteRejectsLengths(t *testing.T) {
	_, conn := newRawInitiator(t)
	ctx := testCtx(t)
	if err := conn.WriteMessage(ctx, nil); !errors.Is(err, channel.ErrZeroLengthMessage) {
		t.Fatalf("empty: got %v, want ErrZeroLengthMessage", err)
	}
	if err := conn.WriteMessage(ctx, make([]byte, channel.MaxMessageLen+1)); !errors.Is(err, channel.ErrMessageTooLarge) {
		t.Fatalf("64MiB+1: got %v, want ErrMessageTooLarge", err)
	}
	// Neither poisons the Conn (the pipe buffers, so this write does not block).
	if err := conn.WriteMessage(ctx, []byte("{}")); err != nil {
		t.Fatalf("write after rejected lengths: %v", err)
	}
}

func TestConn_ReorderAndDuplicates(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	peer, conn := newRawInitiator(t)
	ctx := testCtx(t)
	const n = 300
	var pks []channel.Packet
	for i := range n {
		pks = append(pks, peer.seal(framed([]byte(fmt.Sprintf(`{"n":%d}`, i)))))
	}
	// Shuffle inside blocks of 32 (well within the window) and duplicate some records,
	// including re-sending already delivered ones later.
	var order []channel.Packet
	for start := 0; start < n; start += 32 {
		block := append([]channel.Packet(nil), pks[start:min(start+32, n)]...)
		rng.Shuffle(len(block), func(i, j int) { block[i], block[j] = block[j], block[i] })
		for _, pk := range block {
			order = append(order, pk)
			if rng.IntN(4) == 0 {
				order = append(order, pk) // immediate duplicate
			}
			if rng.IntN(8) == 0 && start > 0 {
				order = append(order, pks[rng.IntN(start)]) // stale replay
			}
		}
	}
	go func() {
		for _, pk := range order {
			if peer.end.WritePacket(ctx, pk) != nil {
				return
			}
		}
	}()
	for i := range n {
		got, err := conn.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if want := fmt.Sprintf(`{"n":%d}`, i); string(got) != want {
			t.Fatalf("message %d: got %s, want %s", i, got, want)
		}
	}
}

func TestConn_ReorderWindow(t *testing.T) {
	for _, tc := range []struct {
		name     string
		distance int
		want     error
	}{
		{"distance 64 buffered", 64, nil},
		{"distance 65 error", 65, channel.ErrReorderWindow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			peer, conn := newRawInitiator(t)
			ctx := testCtx(t)
			var pks []channel.Packet
			for i := 0; i <= tc.distance; i++ {
				pks = append(pks, peer.seal(framed([]byte(fmt.Sprint(i)))))
			}
			peer.deliver(pks[tc.distance])
			peer.deliver(pks[:tc.distance]...)
			for i := 0; i <= tc.distance; i++ {
				got, err := conn.ReadMessage(ctx)
				if tc.want != nil {
					if !errors.Is(err, tc.want) {
						t.Fatalf("got %v, want %v", err, tc.want)
					}
					return
				}
				if err != nil || string(got) != fmt.Sprint(i) {
					t.Fatalf("message %d: got %q, %v", i, got, err)
				}
			}
		})
	}
}

func TestConn_PendingBytesCap(t *testing.T) {
	peer, conn := newRawInitiator(t)
	ctx := testCtx(t)
	_ = peer.seal([]byte("held back")) // seq 0 never arrives
	var full []channel.Packet
	for range 18 {
		full = append(full, peer.seal(make([]byte, channel.RecordPlaintextLen)))
	}
	if len(full[0].Payload) != 61456 {
		t.Fatalf("full record ciphertext = %d, want 61456", len(full[0].Payload))
	}
	peer.deliver(full[:17]...) // 17 × 61456 B buffered: fits in 1 MiB
	peer.deliver(full[17])     // 18th would exceed
	if _, err := conn.ReadMessage(ctx); !errors.Is(err, channel.ErrPendingFull) {
		t.Fatalf("got %v, want ErrPendingFull", err)
	}
}

func TestConn_TamperedRecordFails(t *testing.T) {
	msg := framed([]byte(`{"id":1,"result":{}}`))
	peer0, _ := newRawInitiator(t)
	size := len(peer0.seal(msg).Payload)
	for i := 0; i < size; i++ {
		peer, conn := newRawInitiator(t)
		ctx := testCtx(t)
		pk := peer.seal(msg)
		pk.Payload[i] ^= 0x20
		peer.deliver(pk)
		_, err := conn.ReadMessage(ctx)
		if !errors.Is(err, noise.ErrDecrypt) {
			t.Fatalf("flip byte %d: got %v, want noise.ErrDecrypt", i, err)
		}
		// The genuine record afterwards cannot revive the stream.
		peer.deliver(channel.Packet{Seq: 1, Payload: peer.seal(msg).Payload})
		if _, err := conn.ReadMessage(ctx); !errors.Is(err, noise.ErrDecrypt) {
			t.Fatalf("after failure: got %v, want sticky ErrDecrypt", err)
		}
		conn.Close()
	}
}

func TestConn_SeqNeverWraps(t *testing.T) {
	peer, conn := newRawInitiator(t)
	ctx := testCtx(t)
	channel.SetSendSeqForTest(conn, channel.MaxSeqForTest-2)
	// A two-record message would need seqs max-2, max-1: allowed.
	errc := make(chan error, 1)
	go func() { errc <- conn.WriteMessage(ctx, make([]byte, 61437)) }()
	// The raw peer's nonce is 0 while the Conn's seq is near max: check seqs only.
	for _, want := range []uint32{channel.MaxSeqForTest - 2, channel.MaxSeqForTest - 1} {
		pk, err := peer.end.ReadPacket(ctx)
		if err != nil || pk.Seq != want {
			t.Fatalf("got seq %d (%v), want %d", pk.Seq, err, want)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if err := conn.WriteMessage(ctx, []byte("{}")); !errors.Is(err, channel.ErrSeqExhausted) {
		t.Fatalf("got %v, want ErrSeqExhausted", err)
	}
	if err := conn.WriteMessage(ctx, []byte("{}")); !errors.Is(err, channel.ErrSeqExhausted) {
		t.Fatalf("sticky: got %v, want ErrSeqExhausted", err)
	}
	if n := len(peer.end.peer.Written()); n != 3 { // msg2 + 2 records
		t.Fatalf("Conn wrote %d packets, want 3", n)
	}
}

func TestConn_HandshakeAfterCompletion(t *testing.T) {
	// Responder side ignores it.
	peer, conn := newRawInitiator(t)
	ctx := testCtx(t)
	peer.deliver(channel.Packet{Handshake: true, Payload: []byte{1}}, peer.seal(framed([]byte("{}"))))
	if got, err := conn.ReadMessage(ctx); err != nil || string(got) != "{}" {
		t.Fatalf("responder: got %q, %v; want {} after ignoring a handshake", got, err)
	}
	// Initiator side fails.
	p := runPair(t, channel.InitiatorConfig{Prologue: testPrologue}, channel.ResponderConfig{Prologue: testPrologue})
	if p.iErr != nil || p.rErr != nil {
		t.Fatal(p.iErr, p.rErr)
	}
	p.rEnd.WritePacket(ctx, channel.Packet{Handshake: true, Payload: []byte{1}})
	if _, err := p.iConn.ReadMessage(ctx); !errors.Is(err, channel.ErrUnexpectedHandshake) {
		t.Fatalf("initiator: got %v, want ErrUnexpectedHandshake", err)
	}
}

func TestConn_ConcurrentBothWays(t *testing.T) {
	p := runPair(t, channel.InitiatorConfig{Prologue: testPrologue}, channel.ResponderConfig{Prologue: testPrologue})
	if p.iErr != nil || p.rErr != nil {
		t.Fatal(p.iErr, p.rErr)
	}
	ctx := testCtx(t)
	sizes := []int{1, 100, 61436, 61437, 200000, 359151, 1 << 20}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for _, c := range []*channel.Conn{p.iConn, p.rConn} {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i, n := range sizes {
				if err := c.WriteMessage(ctx, pattern(n, byte(i))); err != nil {
					errs <- err
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i, n := range sizes {
				got, err := c.ReadMessage(ctx)
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(got, pattern(n, byte(i))) {
					errs <- fmt.Errorf("message %d: got %d bytes, want %d", i, len(got), n)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestConn_CloseUnblocksAndClears(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		peer, conn := newRawInitiator(t)
		ctx := testCtx(t)
		readErr := make(chan error, 1)
		go func() {
			_, err := conn.ReadMessage(ctx)
			readErr <- err
		}()
		// Fill the pipe so that the next write blocks.
		for range cap(peer.end.in) {
			if err := conn.WriteMessage(ctx, []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
		writeErr := make(chan error, 1)
		go func() { writeErr <- conn.WriteMessage(ctx, []byte("blocked")) }()
		synctest.Wait() // both calls are now blocked inside the RecordConn
		select {
		case err := <-readErr:
			t.Fatalf("read returned before Close: %v", err)
		case err := <-writeErr:
			t.Fatalf("write returned before Close: %v", err)
		default:
		}
		if err := conn.Close(); err != nil {
			t.Fatal(err)
		}
		for name, ch := range map[string]chan error{"read": readErr, "write": writeErr} {
			if err := <-ch; !errors.Is(err, channel.ErrClosed) {
				t.Errorf("%s: got %v, want ErrClosed", name, err)
			}
		}
		if !channel.KeysClearedForTest(conn) {
			t.Fatal("keys not cleared after Close")
		}
		if _, err := conn.ReadMessage(ctx); !errors.Is(err, channel.ErrClosed) {
			t.Fatalf("read after Close: got %v, want ErrClosed", err)
		}
		if err := conn.WriteMessage(ctx, []byte("x")); !errors.Is(err, channel.ErrClosed) {
			t.Fatalf("write after Close: got %v, want ErrClosed", err)
		}
		if err := conn.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if n := peer.end.peer.Closes(); n != 1 {
			t.Fatalf("RecordConn closed %d times, want 1", n)
		}
	})
}

// releasingEnd is a pipe end that pools its packets' storage: ReleasePacket records the
// payload and scribbles over it, as a reuse would.
type releasingEnd struct {
	*pipeEnd
	released int
}

func (r *releasingEnd) ReleasePacket(payload []byte) {
	r.released++
	for i := range payload {
		payload[i] = 0xA5
	}
}

// TestConn_ReleasesCopiedRecords: the records of a message spanning records are copied
// out and released (reusing them changes no message); a record that holds whole messages
// is not released, since they alias it; nor is a record that waited for reordering.
func TestConn_ReleasesCopiedRecords(t *testing.T) {
	var rel *releasingEnd
	peer, conn := newRawInitiatorOn(t, func(b *pipeEnd) channel.RecordConn {
		rel = &releasingEnd{pipeEnd: b}
		return rel
	})
	ctx := testCtx(t)
	big := pattern(300<<10, 9) // 6 records
	small := []byte(`{"small":1}`)
	fb := framed(big)
	var records [][]byte
	for off := 0; off < len(fb); off += channel.RecordPlaintextLen {
		records = append(records, fb[off:min(off+channel.RecordPlaintextLen, len(fb))])
	}
	records = append(records, framed(small))
	for _, r := range records {
		peer.deliver(peer.seal(r))
	}
	if got, err := conn.ReadMessage(ctx); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("spanning message: got %d bytes, %v; want %d intact", len(got), err, len(big))
	}
	if got, err := conn.ReadMessage(ctx); err != nil || !bytes.Equal(got, small) {
		t.Fatalf("small message: got %q, %v", got, err)
	}
	if want := len(records) - 1; rel.released != want {
		t.Errorf("released %d records, want %d (all but the one the small message aliases)", rel.released, want)
	}

	// Out of order: the record that waited in the reorder buffer is not released, the one
	// that completed the run is.
	before := rel.released
	mid := pattern(100<<10, 4) // 2 records
	fm := framed(mid)
	r1, r2 := peer.seal(fm[:channel.RecordPlaintextLen]), peer.seal(fm[channel.RecordPlaintextLen:])
	peer.deliver(r2)
	peer.deliver(r1)
	if got, err := conn.ReadMessage(ctx); err != nil || !bytes.Equal(got, mid) {
		t.Fatalf("reordered message: got %d bytes, %v; want %d intact", len(got), err, len(mid))
	}
	if got := rel.released - before; got != 1 {
		t.Errorf("released %d records of a reordered pair, want 1 (not the one that waited)", got)
	}
}
