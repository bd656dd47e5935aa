package noise_test

import (
	"testing"

	"github.com/execlab/executor/noise"
)

// BenchmarkHandshake runs one complete hybrid IK handshake (both roles, Split
// included) per iteration.
func BenchmarkHandshake(b *testing.B) {
	initID, respID := mustIdentity(b), mustIdentity(b)
	rpub := respID.Public()
	prologue := noise.AppendPrologue(nil, "env-1", "registration-1", "stream-1")
	auth := make([]byte, 64)
	var buf1, buf2 []byte
	b.ReportAllocs()
	for b.Loop() {
		in, _ := noise.NewHandshake(&noise.Config{Initiator: true, Static: initID, RemoteStatic: &rpub, Prologue: prologue})
		resp, _ := noise.NewHandshake(&noise.Config{Static: respID, Prologue: prologue})
		msg1, err := in.WriteMessage(buf1[:0], auth)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := resp.ReadMessage(nil, msg1); err != nil {
			b.Fatal(err)
		}
		msg2, err := resp.WriteMessage(buf2[:0], nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := in.ReadMessage(nil, msg2); err != nil {
			b.Fatal(err)
		}
		if _, _, err := in.Split(); err != nil {
			b.Fatal(err)
		}
		if _, _, err := resp.Split(); err != nil {
			b.Fatal(err)
		}
		buf1, buf2 = msg1, msg2
	}
}

// BenchmarkRecord60KiB encrypts and decrypts one full 61440-byte record per iteration.
func BenchmarkRecord60KiB(b *testing.B) {
	send, recv := transportPair(b)
	pt := make([]byte, 61440)
	ct := make([]byte, 0, len(pt)+noise.TagLen)
	out := make([]byte, 0, len(pt))
	b.SetBytes(int64(len(pt)))
	b.ReportAllocs()
	for b.Loop() {
		c, err := send.Encrypt(ct[:0], nil, pt)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := recv.Decrypt(out[:0], nil, c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHandshakeResponder measures the executor's share of a handshake: read
// message 1, write message 2, Split. The same message 1 is replayed to a fresh
// responder each iteration (a cached peer, as a harness dialling again is).
func BenchmarkHandshakeResponder(b *testing.B) {
	initID, respID := mustIdentity(b), mustIdentity(b)
	rpub := respID.Public()
	prologue := noise.AppendPrologue(nil, "env-1", "registration-1", "stream-1")
	in, _ := noise.NewHandshake(&noise.Config{Initiator: true, Static: initID, RemoteStatic: &rpub, Prologue: prologue})
	msg1, err := in.WriteMessage(nil, make([]byte, 64))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	defer noise.ReportCPU(b)()
	for b.Loop() {
		resp, _ := noise.NewHandshake(&noise.Config{Static: respID, Prologue: prologue})
		if _, err := resp.ReadMessage(nil, msg1); err != nil {
			b.Fatal(err)
		}
		// nil, as noise/channel passes: the message's allocation is part of the cost.
		if _, err := resp.WriteMessage(nil, nil); err != nil {
			b.Fatal(err)
		}
		if _, _, err := resp.Split(); err != nil {
			b.Fatal(err)
		}
	}
}
