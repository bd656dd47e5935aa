package noise_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	mrand "math/rand/v2"
	"testing"

	"github.com/execlab/executor/noise"
)

// TestHandshake_KnownAnswer pins whole transcripts (SHA-256 of message 1, of message 2,
// and the final handshake hash) under testing/cryptotest's fixed global randomness.
// The values were produced by the standard-library implementation (crypto/ecdh,
// crypto/mlkem; before issue 16) and reproduced unchanged by the circl one: same keys,
// same KEM randomness, same bytes on the wire.
func TestHandshake_KnownAnswer(t *testing.T) {
	for _, v := range []struct {
		seed             uint64
		msg1, msg2, hash string
	}{
		{7, "e551a9fc84070f4f6513956618998f3792432a845aad827a310a46409af550c3",
			"36fdec963accca75578e449244e2770f505336d9404d718b3b6f48ec5478bb87",
			"a477160914e7cb8925fa33c375feeab565e416b64d8d84bcdc47881ccda89020"},
		{8, "bfb4801ee4ff2d86f932ba94a9f5f6a508bbe077c08f6fa774b92d0dc04c5183",
			"5765f3fe0209277fa954dbc0315645c8c89c69a9d053e41f1ddf254ecd1d4ea5",
			"9daec6be849d2fe54baf22d4a278d069bd3fbde717feca394c20b0c3dacd16fa"},
	} {
		tr, in := deterministicHandshake(t, v.seed, []byte("auth"))
		if _, err := in.ReadMessage(nil, tr.msg2); err != nil {
			t.Fatalf("seed %d: initiator reading message 2: %v", v.seed, err)
		}
		m1, m2 := sha256.Sum256(tr.msg1), sha256.Sum256(tr.msg2)
		for _, c := range []struct {
			name string
			got  []byte
			want string
		}{{"message 1", m1[:], v.msg1}, {"message 2", m2[:], v.msg2}, {"handshake hash", tr.hash[:], v.hash}} {
			if hex.EncodeToString(c.got) != c.want {
				t.Errorf("seed %d: %s = %x, want %s", v.seed, c.name, c.got, c.want)
			}
		}
	}
}

// seededRand is a deterministic Config.Rand.
func seededRand(seed uint64) io.Reader {
	return mrand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)})
}

// TestHandshake_DeterministicFromConfigRand: Config.Rand alone (no global random
// override) fixes every key and every ML-KEM encapsulation: the same seeds give the
// same messages and hash, another seed other messages.
func TestHandshake_DeterministicFromConfigRand(t *testing.T) {
	run := func(seed uint64) (msg1, msg2 []byte, hash [noise.HashLen]byte) {
		initID, err := noise.GenerateIdentity(seededRand(seed))
		if err != nil {
			t.Fatal(err)
		}
		respID, err := noise.GenerateIdentity(seededRand(seed + 1))
		if err != nil {
			t.Fatal(err)
		}
		rpub := respID.Public()
		in, _ := noise.NewHandshake(&noise.Config{Initiator: true, Static: initID, RemoteStatic: &rpub, Rand: seededRand(seed + 2)})
		resp, _ := noise.NewHandshake(&noise.Config{Static: respID, Rand: seededRand(seed + 3)})
		if msg1, err = in.WriteMessage(nil, []byte("auth")); err != nil {
			t.Fatal(err)
		}
		if _, err = resp.ReadMessage(nil, msg1); err != nil {
			t.Fatal(err)
		}
		if msg2, err = resp.WriteMessage(nil, nil); err != nil {
			t.Fatal(err)
		}
		if _, err = in.ReadMessage(nil, msg2); err != nil {
			t.Fatal(err)
		}
		return msg1, msg2, resp.HandshakeHash()
	}
	a1, a2, ah := run(10)
	b1, b2, bh := run(10)
	if !bytes.Equal(a1, b1) || !bytes.Equal(a2, b2) || ah != bh {
		t.Fatal("the same Config.Rand seeds produced different transcripts")
	}
	c1, c2, _ := run(20)
	if bytes.Equal(a1[:noise.KEMCiphertextLen], c1[:noise.KEMCiphertextLen]) || bytes.Equal(a2[:noise.KEMCiphertextLen], c2[:noise.KEMCiphertextLen]) {
		t.Fatal("different seeds produced the same KEM ciphertext")
	}
}

// TestHandshake_RejectsLowOrderEphemeral: a message 1 whose X25519 ephemeral is a
// low-order point (here 0 and 1) fails at es with ErrInvalidKey: DH with it is all zero.
func TestHandshake_RejectsLowOrderEphemeral(t *testing.T) {
	for _, point := range []byte{0, 1} {
		p := newPair(t, nil, nil)
		msg1, err := p.init.WriteMessage(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		e := msg1[noise.KEMCiphertextLen : noise.KEMCiphertextLen+noise.DHLen]
		clear(e)
		e[0] = point
		if _, err := p.resp.ReadMessage(nil, msg1); !errors.Is(err, noise.ErrInvalidKey) {
			t.Errorf("ephemeral u = %d: got %v, want ErrInvalidKey", point, err)
		}
	}
}
