package noise_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/execlab/executor/noise"
)

var genSeeds = flag.Bool("gen-seeds", false, "rewrite testdata/fuzz seed corpora")

// fixedIdentity returns a deterministic identity from a one-byte tag.
func fixedIdentity(t testing.TB, tag byte) *noise.Identity {
	t.Helper()
	id, err := noise.NewIdentity(bytes.Repeat([]byte{tag}, noise.DHLen), bytes.Repeat([]byte{tag ^ 0x5a}, noise.KEMSeedLen))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

var fuzzPrologue = noise.AppendPrologue(nil, "env-1", "registration-1", "stream-1")

func fuzzResponder(t testing.TB) *noise.HandshakeState {
	hs, err := noise.NewHandshake(&noise.Config{Static: fixedIdentity(t, 2), Prologue: fuzzPrologue})
	if err != nil {
		t.Fatal(err)
	}
	return hs
}

func fuzzInitiator(t testing.TB) (*noise.HandshakeState, []byte) {
	rpub := fixedIdentity(t, 2).Public()
	hs, err := noise.NewHandshake(&noise.Config{Initiator: true, Static: fixedIdentity(t, 1), RemoteStatic: &rpub, Prologue: fuzzPrologue})
	if err != nil {
		t.Fatal(err)
	}
	msg1, err := hs.WriteMessage(nil, []byte("authz"))
	if err != nil {
		t.Fatal(err)
	}
	return hs, msg1
}

// FuzzReadMessage1 feeds arbitrary bytes to a responder as message 1.
func FuzzReadMessage1(f *testing.F) {
	_, msg1 := fuzzInitiator(f)
	f.Add(msg1)
	f.Add(msg1[:noise.Message1Overhead-1])
	f.Add([]byte{})
	static := fixedIdentity(f, 2) // built once: key expansion would dominate every input
	f.Fuzz(func(t *testing.T, msg []byte) {
		hs, err := noise.NewHandshake(&noise.Config{Static: static, Prologue: fuzzPrologue})
		if err != nil {
			t.Fatal(err)
		}
		payload, err := hs.ReadMessage(nil, msg)
		if err != nil {
			if _, err2 := hs.WriteMessage(nil, nil); !errors.Is(err2, noise.ErrPoisoned) {
				t.Fatalf("after failed read, WriteMessage: got %v, want ErrPoisoned", err2)
			}
			return
		}
		if len(payload) != len(msg)-noise.Message1Overhead {
			t.Fatalf("payload len %d for message len %d", len(payload), len(msg))
		}
		if _, err := hs.PeerStatic(); err != nil {
			t.Fatalf("accepted message 1 without a peer key: %v", err)
		}
	})
}

// FuzzReadMessage2 feeds arbitrary bytes to an initiator as message 2.
func FuzzReadMessage2(f *testing.F) {
	in, msg1 := fuzzInitiator(f)
	resp := fuzzResponder(f)
	if _, err := resp.ReadMessage(nil, msg1); err != nil {
		f.Fatal(err)
	}
	msg2, _ := resp.WriteMessage(nil, nil)
	_ = in
	f.Add(msg2)
	f.Add(msg2[:noise.Message2Overhead-1])
	f.Add(make([]byte, noise.Message2Overhead))
	f.Fuzz(func(t *testing.T, msg []byte) {
		hs, _ := fuzzInitiator(t)
		if _, err := hs.ReadMessage(nil, msg); err == nil {
			// A fresh ephemeral per run means no fuzzed message can authenticate.
			t.Fatalf("message 2 of %d bytes authenticated against a fresh initiator", len(msg))
		}
		if hs.Complete() {
			t.Fatal("failed handshake reports Complete")
		}
	})
}

// FuzzPublicKeyJSON decodes arbitrary JSON; accepted keys must re-encode canonically.
func FuzzPublicKeyJSON(f *testing.F) {
	good, _ := json.Marshal(fixedIdentity(f, 3).Public())
	f.Add(good)
	f.Add([]byte(`{"suite":"x"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		pk, err := noise.ParsePublicKeyJSON(in)
		if err != nil {
			return
		}
		out, _ := json.Marshal(pk)
		back, err := noise.ParsePublicKeyJSON(out)
		if err != nil || back != pk {
			t.Fatalf("re-encoded key does not round-trip: %v", err)
		}
	})
}

// TestGenerateFuzzSeeds rewrites the checked-in seed corpora with -gen-seeds.
func TestGenerateFuzzSeeds(t *testing.T) {
	if !*genSeeds {
		return
	}
	in, msg1 := fuzzInitiator(t)
	_ = in
	resp := fuzzResponder(t)
	if _, err := resp.ReadMessage(nil, msg1); err != nil {
		t.Fatal(err)
	}
	msg2, _ := resp.WriteMessage(nil, nil)
	good, _ := json.Marshal(fixedIdentity(t, 3).Public())
	seeds := map[string][][]byte{
		"FuzzReadMessage1":  {msg1, msg1[:100], append(bytes.Clone(msg1), 0xff), make([]byte, noise.Message1Overhead)},
		"FuzzReadMessage2":  {msg2, msg2[:noise.Message2Overhead], make([]byte, noise.Message2Overhead+1)},
		"FuzzPublicKeyJSON": {good, bytes.Replace(good, []byte(`"}`), []byte(`","x":1}`), 1), []byte(`{"suite":null}`)},
	}
	for name, list := range seeds {
		writeSeeds(t, name, list)
	}
}

func writeSeeds(t *testing.T, name string, list [][]byte) {
	dir := filepath.Join("testdata", "fuzz", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, b := range list {
		body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(b)) + ")\n"
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
