package noise_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/execlab/executor/noise"
)

func mustIdentity(t testing.TB) *noise.Identity {
	t.Helper()
	id, err := noise.GenerateIdentity(nil)
	if err != nil {
		t.Fatalf("GenerateIdentity: %v", err)
	}
	return id
}

type pair struct {
	init, resp     *noise.HandshakeState
	initID, respID *noise.Identity
}

func newPair(t testing.TB, prologueI, prologueR []byte) *pair {
	t.Helper()
	p := &pair{initID: mustIdentity(t), respID: mustIdentity(t)}
	rpub := p.respID.Public()
	var err error
	p.init, err = noise.NewHandshake(&noise.Config{Initiator: true, Static: p.initID, RemoteStatic: &rpub, Prologue: prologueI})
	if err != nil {
		t.Fatalf("NewHandshake(initiator): %v", err)
	}
	p.resp, err = noise.NewHandshake(&noise.Config{Static: p.respID, Prologue: prologueR})
	if err != nil {
		t.Fatalf("NewHandshake(responder): %v", err)
	}
	return p
}

func TestProtocolNameHash(t *testing.T) {
	got := sha256.Sum256([]byte(noise.ProtocolName))
	want := "646856ce6fda9f9f037c69557c3c9f5ada7d1bc70b0c4beea72befcaf862edfa"
	if hex.EncodeToString(got[:]) != want {
		t.Fatalf("SHA-256(protocol name) = %x, want %s", got, want)
	}
	if len(noise.ProtocolName) != 43 {
		t.Fatalf("len(ProtocolName) = %d, want 43", len(noise.ProtocolName))
	}
	// Before any MixHash the transcript hash is that digest; with an empty prologue it
	// is SHA-256(digest), which pins the order of initialisation steps.
	id := mustIdentity(t)
	hs, err := noise.NewHandshake(&noise.Config{Static: id})
	if err != nil {
		t.Fatal(err)
	}
	h0 := sha256.Sum256([]byte(noise.ProtocolName))
	h1 := sha256.Sum256(h0[:])
	pub := id.Public()
	h2 := sha256.Sum256(append(h1[:], pub.X25519[:]...))
	h3 := sha256.Sum256(append(h2[:], pub.MLKEM768[:]...))
	if got := hs.HandshakeHash(); got != h3 {
		t.Fatalf("initial transcript hash = %x, want %x", got, h3)
	}
}

func TestIKRoundtrip(t *testing.T) {
	prologue := noise.AppendPrologue(nil, "env-1", "registration-1", "stream-1")
	for _, tc := range []struct {
		name    string
		auth    []byte
		payload []byte
	}{
		{"empty", nil, nil},
		{"auth15", []byte("authorization-x"), nil},
		{"auth4096", bytes.Repeat([]byte("a"), 4096), nil},
		{"rejected-marker", []byte("a"), []byte("codex-registry-authentication-rejected/v1")},
		{"max", bytes.Repeat([]byte{7}, noise.MaxMessage1Payload), bytes.Repeat([]byte{9}, noise.MaxMessage2Payload)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPair(t, prologue, prologue)
			msg1, err := p.init.WriteMessage(nil, tc.auth)
			if err != nil {
				t.Fatalf("write msg1: %v", err)
			}
			if got, want := len(msg1), 3568+len(tc.auth); got != want {
				t.Fatalf("len(msg1) = %d, want %d", got, want)
			}
			if _, err := p.resp.PeerStatic(); !errors.Is(err, noise.ErrMissingInitiatorStatic) {
				t.Fatalf("PeerStatic before msg1: got %v, want ErrMissingInitiatorStatic", err)
			}
			auth, err := p.resp.ReadMessage(nil, msg1)
			if err != nil {
				t.Fatalf("read msg1: %v", err)
			}
			if !bytes.Equal(auth, tc.auth) {
				t.Fatalf("authorization: got %d bytes, want %d", len(auth), len(tc.auth))
			}
			peer, err := p.resp.PeerStatic()
			if err != nil || peer != p.initID.Public() {
				t.Fatalf("responder PeerStatic: got err %v / match %v, want initiator key", err, peer == p.initID.Public())
			}
			msg2, err := p.resp.WriteMessage(nil, tc.payload)
			if err != nil {
				t.Fatalf("write msg2: %v", err)
			}
			if got, want := len(msg2), 3424+len(tc.payload); got != want {
				t.Fatalf("len(msg2) = %d, want %d", got, want)
			}
			pl, err := p.init.ReadMessage(nil, msg2)
			if err != nil {
				t.Fatalf("read msg2: %v", err)
			}
			if !bytes.Equal(pl, tc.payload) {
				t.Fatalf("msg2 payload mismatch: got %d bytes, want %d", len(pl), len(tc.payload))
			}
			if !p.init.Complete() || !p.resp.Complete() {
				t.Fatalf("Complete: got %v/%v, want true/true", p.init.Complete(), p.resp.Complete())
			}
			if p.init.HandshakeHash() != p.resp.HandshakeHash() {
				t.Fatal("handshake hashes differ")
			}
			iSend, iRecv, err := p.init.Split()
			if err != nil {
				t.Fatal(err)
			}
			rSend, rRecv, err := p.resp.Split()
			if err != nil {
				t.Fatal(err)
			}
			for i, dir := range []struct{ enc, dec *noise.CipherState }{{iSend, rRecv}, {rSend, iRecv}} {
				ct, err := dir.enc.Encrypt(nil, nil, []byte("hello"))
				if err != nil {
					t.Fatal(err)
				}
				pt, err := dir.dec.Decrypt(nil, nil, ct)
				if err != nil || string(pt) != "hello" {
					t.Fatalf("direction %d: got %q, %v; want hello", i, pt, err)
				}
			}
			// k1 != k2: the initiator cannot decrypt its own record.
			ct, _ := iSend.Encrypt(nil, nil, []byte("x"))
			if _, err := iRecv.Decrypt(nil, nil, ct); !errors.Is(err, noise.ErrDecrypt) {
				t.Fatalf("own record decrypted: got %v, want ErrDecrypt", err)
			}
		})
	}
}

func TestIKRejectsWrongResponderKey(t *testing.T) {
	initID, respID, other := mustIdentity(t), mustIdentity(t), mustIdentity(t)
	wrong := other.Public()
	in, _ := noise.NewHandshake(&noise.Config{Initiator: true, Static: initID, RemoteStatic: &wrong})
	resp, _ := noise.NewHandshake(&noise.Config{Static: respID})
	msg1, err := in.WriteMessage(nil, []byte("auth"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resp.ReadMessage(nil, msg1); !errors.Is(err, noise.ErrDecrypt) {
		t.Fatalf("read msg1 with wrong responder key: got %v, want ErrDecrypt", err)
	}
	if _, err := resp.WriteMessage(nil, nil); !errors.Is(err, noise.ErrPoisoned) {
		t.Fatalf("write after failure: got %v, want ErrPoisoned", err)
	}
}

func TestIKRejectsMismatchedPrologue(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    []byte
	}{
		{"other-stream", noise.AppendPrologue(nil, "env-1", "registration-1", "stream-2")},
		{"other-env", noise.AppendPrologue(nil, "env-2", "registration-1", "stream-1")},
		{"space-in-registration", noise.AppendPrologue(nil, "env-1", " registration-1", "stream-1")},
		{"empty", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPair(t, noise.AppendPrologue(nil, "env-1", "registration-1", "stream-1"), tc.r)
			msg1, err := p.init.WriteMessage(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.resp.ReadMessage(nil, msg1); !errors.Is(err, noise.ErrDecrypt) {
				t.Fatalf("got %v, want ErrDecrypt", err)
			}
		})
	}
}
