package noise_test

import (
	"bytes"
	"errors"
	"testing"
	"testing/cryptotest"

	"github.com/execlab/executor/noise"
)

// transcript is one deterministic handshake: identities, messages and final hash.
type transcript struct {
	initID, respID *noise.Identity
	msg1, msg2     []byte
	hash           [noise.HashLen]byte
}

// deterministicHandshake runs a full handshake under a fixed global random seed, so
// every key, encapsulation and message is reproducible. It stops before reading
// message 2 and returns the initiator state waiting for it.
func deterministicHandshake(t *testing.T, seed uint64, auth []byte) (*transcript, *noise.HandshakeState) {
	t.Helper()
	cryptotest.SetGlobalRandom(t, seed)
	tr := &transcript{initID: mustIdentity(t), respID: mustIdentity(t)}
	prologue := noise.AppendPrologue(nil, "env-1", "registration-1", "stream-1")
	rpub := tr.respID.Public()
	in, err := noise.NewHandshake(&noise.Config{Initiator: true, Static: tr.initID, RemoteStatic: &rpub, Prologue: prologue})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := noise.NewHandshake(&noise.Config{Static: tr.respID, Prologue: prologue})
	if err != nil {
		t.Fatal(err)
	}
	if tr.msg1, err = in.WriteMessage(nil, auth); err != nil {
		t.Fatal(err)
	}
	if _, err = resp.ReadMessage(nil, tr.msg1); err != nil {
		t.Fatal(err)
	}
	if tr.msg2, err = resp.WriteMessage(nil, nil); err != nil {
		t.Fatal(err)
	}
	tr.hash = resp.HandshakeHash()
	return tr, in
}

func TestHandshake_DeterministicUnderFixedRandom(t *testing.T) {
	a, ina := deterministicHandshake(t, 7, []byte("auth"))
	b, inb := deterministicHandshake(t, 7, []byte("auth"))
	if !bytes.Equal(a.msg1, b.msg1) || !bytes.Equal(a.msg2, b.msg2) || a.hash != b.hash {
		t.Fatal("same seed produced different transcripts")
	}
	for _, in := range []*noise.HandshakeState{ina, inb} {
		if _, err := in.ReadMessage(nil, a.msg2); err != nil {
			t.Fatalf("reading msg2: %v", err)
		}
	}
	c, _ := deterministicHandshake(t, 8, []byte("auth"))
	if bytes.Equal(a.msg1, c.msg1) {
		t.Fatal("different seeds produced the same message 1")
	}
}

// TestHandshake_NoReuse: two handshakes between the same identities share no
// ephemeral, KEM ciphertext or transport key.
func TestHandshake_NoReuse(t *testing.T) {
	initID, respID := mustIdentity(t), mustIdentity(t)
	rpub := respID.Public()
	type session struct {
		msg1, msg2 []byte
		send       *noise.CipherState
		recv       *noise.CipherState
	}
	run := func() session {
		in, _ := noise.NewHandshake(&noise.Config{Initiator: true, Static: initID, RemoteStatic: &rpub})
		resp, _ := noise.NewHandshake(&noise.Config{Static: respID})
		var s session
		s.msg1, _ = in.WriteMessage(nil, nil)
		if _, err := resp.ReadMessage(nil, s.msg1); err != nil {
			t.Fatal(err)
		}
		s.msg2, _ = resp.WriteMessage(nil, nil)
		if _, err := in.ReadMessage(nil, s.msg2); err != nil {
			t.Fatal(err)
		}
		s.send, _, _ = in.Split()
		_, s.recv, _ = resp.Split()
		return s
	}
	a, b := run(), run()
	for _, r := range []struct {
		name       string
		start, end int
		x, y       []byte
	}{
		{"msg1 skem", 0, 1088, a.msg1, b.msg1},
		{"msg1 e", 1088, 2304, a.msg1, b.msg1},
		{"msg1 s (encrypted)", 2304, 3552, a.msg1, b.msg1},
		{"msg2 ekem", 0, 1088, a.msg2, b.msg2},
		{"msg2 skem", 1088, 2192, a.msg2, b.msg2},
		{"msg2 e", 2192, 3408, a.msg2, b.msg2},
	} {
		if bytes.Equal(r.x[r.start:r.end], r.y[r.start:r.end]) {
			t.Errorf("%s repeated across handshakes", r.name)
		}
	}
	ca, _ := a.send.Encrypt(nil, nil, []byte("same"))
	cb, _ := b.send.Encrypt(nil, nil, []byte("same"))
	if bytes.Equal(ca, cb) {
		t.Fatal("same plaintext and nonce gave the same record in two sessions")
	}
	if _, err := b.recv.Decrypt(nil, nil, ca); !errors.Is(err, noise.ErrDecrypt) {
		t.Fatalf("record of session A decrypted in session B: %v", err)
	}
}

// TestHandshake_TamperMessage1 flips every byte of message 1; the responder must
// reject each variant.
func TestHandshake_TamperMessage1(t *testing.T) {
	auth := []byte("harness-authorization")
	tr, _ := deterministicHandshake(t, 11, auth)
	for i := range tr.msg1 {
		bad := bytes.Clone(tr.msg1)
		bad[i] ^= 0x01 << (i % 8)
		resp, _ := noise.NewHandshake(&noise.Config{Static: tr.respID, Prologue: noise.AppendPrologue(nil, "env-1", "registration-1", "stream-1")})
		if _, err := resp.ReadMessage(nil, bad); err == nil {
			t.Fatalf("flip of byte %d of message 1 accepted", i)
		}
	}
	// Truncation and extension fail too.
	for _, bad := range [][]byte{tr.msg1[:len(tr.msg1)-1], append(bytes.Clone(tr.msg1), 0)} {
		resp, _ := noise.NewHandshake(&noise.Config{Static: tr.respID, Prologue: noise.AppendPrologue(nil, "env-1", "registration-1", "stream-1")})
		if _, err := resp.ReadMessage(nil, bad); err == nil {
			t.Fatalf("message 1 of length %d accepted", len(bad))
		}
	}
}

// TestHandshake_TamperMessage2 flips every byte of message 2; the initiator must reject
// each variant. The initiator state is rebuilt deterministically for every flip.
func TestHandshake_TamperMessage2(t *testing.T) {
	if testing.Short() {
		t.Log("short mode: flipping every 7th byte only")
	}
	ref, in := deterministicHandshake(t, 13, nil)
	if _, err := in.ReadMessage(nil, ref.msg2); err != nil {
		t.Fatalf("untampered message 2: %v", err)
	}
	step := 1
	if testing.Short() {
		step = 7
	}
	for i := 0; i < len(ref.msg2); i += step {
		tr, in := deterministicHandshake(t, 13, nil)
		if !bytes.Equal(tr.msg2, ref.msg2) {
			t.Fatal("replay of the seeded handshake diverged")
		}
		bad := tr.msg2
		bad[i] ^= 0x01 << (i % 8)
		if _, err := in.ReadMessage(nil, bad); err == nil {
			t.Fatalf("flip of byte %d of message 2 accepted", i)
		}
	}
}
