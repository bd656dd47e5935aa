package noise_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/execlab/executor/noise"
)

func TestHandshake_SizeGuards(t *testing.T) {
	p := newPair(t, nil, nil)
	if _, err := p.init.WriteMessage(nil, make([]byte, noise.MaxMessage1Payload+1)); !errors.Is(err, noise.ErrHandshakePayloadTooLarge) {
		t.Fatalf("oversized msg1 payload: got %v, want ErrHandshakePayloadTooLarge", err)
	}
	if noise.Message1Overhead != 3568 || noise.Message2Overhead != 3424 {
		t.Fatalf("overheads = %d/%d, want 3568/3424", noise.Message1Overhead, noise.Message2Overhead)
	}

	p = newPair(t, nil, nil)
	if _, err := p.resp.ReadMessage(nil, make([]byte, noise.MaxMessageLen+1)); !errors.Is(err, noise.ErrHandshakeRequestTooLarge) {
		t.Fatalf("oversized msg1: got %v, want ErrHandshakeRequestTooLarge", err)
	}
	p = newPair(t, nil, nil)
	if _, err := p.resp.ReadMessage(nil, make([]byte, noise.Message1Overhead-1)); !errors.Is(err, noise.ErrShortMessage) {
		t.Fatalf("short msg1: got %v, want ErrShortMessage", err)
	}

	p = newPair(t, nil, nil)
	msg1, _ := p.init.WriteMessage(nil, nil)
	if _, err := p.resp.ReadMessage(nil, msg1); err != nil {
		t.Fatal(err)
	}
	if _, err := p.resp.WriteMessage(nil, make([]byte, noise.MaxMessage2Payload+1)); !errors.Is(err, noise.ErrHandshakePayloadTooLarge) {
		t.Fatalf("oversized msg2 payload: got %v, want ErrHandshakePayloadTooLarge", err)
	}
	if _, err := p.init.ReadMessage(nil, make([]byte, noise.MaxMessageLen+1)); !errors.Is(err, noise.ErrHandshakeResponseTooLarge) {
		t.Fatalf("oversized msg2: got %v, want ErrHandshakeResponseTooLarge", err)
	}
	p = newPair(t, nil, nil)
	p.init.WriteMessage(nil, nil)
	if _, err := p.init.ReadMessage(nil, make([]byte, noise.Message2Overhead-1)); !errors.Is(err, noise.ErrShortMessage) {
		t.Fatalf("short msg2: got %v, want ErrShortMessage", err)
	}
}

func TestHandshake_WrongTurn(t *testing.T) {
	p := newPair(t, nil, nil)
	for name, f := range map[string]func() error{
		"initiator read first":  func() error { _, err := p.init.ReadMessage(nil, nil); return err },
		"responder write first": func() error { _, err := p.resp.WriteMessage(nil, nil); return err },
		"initiator split early": func() error { _, _, err := p.init.Split(); return err },
	} {
		if err := f(); !errors.Is(err, noise.ErrWrongTurn) {
			t.Errorf("%s: got %v, want ErrWrongTurn", name, err)
		}
	}
	// Out-of-turn calls do not poison: the handshake still completes.
	msg1, _ := p.init.WriteMessage(nil, nil)
	if _, err := p.init.WriteMessage(nil, nil); !errors.Is(err, noise.ErrWrongTurn) {
		t.Fatalf("second WriteMessage: got %v, want ErrWrongTurn", err)
	}
	if _, err := p.resp.ReadMessage(nil, msg1); err != nil {
		t.Fatal(err)
	}
	msg2, _ := p.resp.WriteMessage(nil, nil)
	if _, err := p.init.ReadMessage(nil, msg2); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.init.Split(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.init.Split(); !errors.Is(err, noise.ErrCleared) {
		t.Fatalf("second Split: got %v, want ErrCleared", err)
	}
}

func TestHandshake_Config(t *testing.T) {
	id := mustIdentity(t)
	for name, cfg := range map[string]*noise.Config{
		"nil":                 nil,
		"no static":           {Initiator: true},
		"initiator no remote": {Initiator: true, Static: id},
	} {
		if _, err := noise.NewHandshake(cfg); !errors.Is(err, noise.ErrConfig) {
			t.Errorf("%s: got %v, want ErrConfig", name, err)
		}
	}
	bad := id.Public()
	copy(bad.MLKEM768[:], bytes.Repeat([]byte{0xff}, 64))
	if _, err := noise.NewHandshake(&noise.Config{Initiator: true, Static: id, RemoteStatic: &bad}); !errors.Is(err, noise.ErrInvalidKey) {
		t.Fatalf("invalid remote ML-KEM key: got %v, want ErrInvalidKey", err)
	}
	if _, err := noise.NewIdentity(make([]byte, 31), make([]byte, 64)); !errors.Is(err, noise.ErrConfig) {
		t.Fatalf("short X25519 private: got %v, want ErrConfig", err)
	}
}
