package channel_test

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/execlab/executor/noise"
	"github.com/execlab/executor/noise/channel"
)

var testPrologue = noise.AppendPrologue(nil, "env-1", "registration-1", "stream-1")

func mustIdentity(t testing.TB) *noise.Identity {
	t.Helper()
	id, err := noise.GenerateIdentity(nil)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func allowAll(context.Context, noise.PublicKey, []byte) error { return nil }

// rawPeer is a hand-driven initiator: it runs the handshake with the noise package and
// then builds records itself, so tests control seqs, order, duplicates and plaintext.
type rawPeer struct {
	t          testing.TB
	end        *pipeEnd
	send, recv *noise.CipherState
	nextSeq    uint32
	recvCount  uint32 // records read from the Conn so far
}

type connResult struct {
	conn *channel.Conn
	err  error
}

// newRawInitiator connects a rawPeer (initiator) to a channel.Responder.
func newRawInitiator(t testing.TB) (*rawPeer, *channel.Conn) {
	t.Helper()
	return newRawInitiatorOn(t, func(b *pipeEnd) channel.RecordConn { return b })
}

// newRawInitiatorOn is newRawInitiator with the Conn's RecordConn made from its pipe end
// by wrap.
func newRawInitiatorOn(t testing.TB, wrap func(*pipeEnd) channel.RecordConn) (*rawPeer, *channel.Conn) {
	t.Helper()
	ctx := testCtx(t)
	respID, initID := mustIdentity(t), mustIdentity(t)
	a, b := newPipe(256)
	res := make(chan connResult, 1)
	go func() {
		c, err := channel.Responder(ctx, wrap(b), &channel.ResponderConfig{Static: respID, Prologue: testPrologue, Authorize: allowAll})
		res <- connResult{c, err}
	}()
	rpub := respID.Public()
	hs, err := noise.NewHandshake(&noise.Config{Initiator: true, Static: initID, RemoteStatic: &rpub, Prologue: testPrologue})
	if err != nil {
		t.Fatal(err)
	}
	msg1, _ := hs.WriteMessage(nil, nil)
	if err := a.WritePacket(ctx, channel.Packet{Handshake: true, Payload: msg1}); err != nil {
		t.Fatal(err)
	}
	p, err := a.ReadPacket(ctx)
	if err != nil || !p.Handshake {
		t.Fatalf("reading msg2: %v (handshake %v)", err, p.Handshake)
	}
	if _, err := hs.ReadMessage(nil, p.Payload); err != nil {
		t.Fatal(err)
	}
	send, recv, err := hs.Split()
	if err != nil {
		t.Fatal(err)
	}
	r := <-res
	if r.err != nil {
		t.Fatalf("Responder: %v", r.err)
	}
	t.Cleanup(func() { r.conn.Close() })
	return &rawPeer{t: t, end: a, send: send, recv: recv}, r.conn
}

// seal encrypts plaintext as the next record (nonce order = seq order).
func (p *rawPeer) seal(plaintext []byte) channel.Packet {
	ct, err := p.send.Encrypt(nil, nil, plaintext)
	if err != nil {
		p.t.Fatal(err)
	}
	pk := channel.Packet{Seq: p.nextSeq, Payload: ct}
	p.nextSeq++
	return pk
}

func (p *rawPeer) deliver(pks ...channel.Packet) {
	for _, pk := range pks {
		if err := p.end.WritePacket(context.Background(), pk); err != nil {
			p.t.Fatal(err)
		}
	}
}

// open reads the next record written by the Conn and decrypts it.
func (p *rawPeer) open(ctx context.Context) (channel.Packet, []byte) {
	pk, err := p.end.ReadPacket(ctx)
	if err != nil {
		p.t.Fatal(err)
	}
	if pk.Handshake {
		p.t.Fatal("got handshake packet, want record")
	}
	pt, err := p.recv.Decrypt(nil, nil, pk.Payload)
	if err != nil {
		p.t.Fatalf("decrypting record seq %d: %v", pk.Seq, err)
	}
	return pk, pt
}

// framed returns u32be(len) ‖ msg; an independent encoder for cross-checking.
func framed(msg []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(msg))), msg...)
}
