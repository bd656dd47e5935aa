package client_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/registry/client"
)

// frameNow is the clock of the frame tests: 2026-11-29T00:00:00Z.
var frameNow = time.Unix(1795910400, 0)

func frameLine(token, env string, exp uint64) string {
	tok, _ := json.Marshal(token)
	e, _ := json.Marshal(env)
	return fmt.Sprintf(`{"version":1,"token":%s,"environment_id":%s,"expires_at":%d}`, tok, e, exp)
}

// TestDecodeCredentialFrame pins the frame rules observed from codex 0.169.0
// (spec/registry-auth.md §11.1 row 1b; see credframe.go).
func TestDecodeCredentialFrame(t *testing.T) {
	future := uint64(frameNow.Unix() + 3600)
	tests := []struct {
		name  string
		line  string
		token string // want, when ok
		exp   uint64
	}{
		{"object", frameLine("tok-A", "env-1", future), "tok-A", future},
		{"member order free", `{"expires_at":5,"token":"t","environment_id":"env-1","version":1}`, "t", 5},
		{"array form", `[1,"env-1","tok",7]`, "tok", 7},
		{"surrounding whitespace and CR", " \t" + frameLine("tok", "env-1", 9) + " \r", "tok", 9},
		{"escaped key", `{"vers\u0069on":1,"token":"t","environment_id":"env-1","expires_at":1}`, "t", 1},
		{"punctuation token", frameLine(`a!#$%&*^|=.-_~+/:;,()<>@[]?{}'"\`, "env-1", 1), `a!#$%&*^|=.-_~+/:;,()<>@[]?{}'"\`, 1},
		{"u64 max", `{"version":1,"token":"t","environment_id":"env-1","expires_at":18446744073709551615}`, "t", 1<<64 - 1},
		{"surrogate pair in env", `{"version":1,"token":"t","environment_id":"\ud83d\ude00","expires_at":1}`, "t", 1},

		{"empty object", `{}`, "", 0},
		{"empty line", ``, "", 0},
		{"missing version", `{"token":"t","environment_id":"env-1","expires_at":1}`, "", 0},
		{"missing token", `{"version":1,"environment_id":"env-1","expires_at":1}`, "", 0},
		{"missing environment", `{"version":1,"token":"t","expires_at":1}`, "", 0},
		{"missing expiry", `{"version":1,"token":"t","environment_id":"env-1"}`, "", 0},
		{"null expiry", `{"version":1,"token":"t","environment_id":"env-1","expires_at":null}`, "", 0},
		{"unknown member", `{"version":1,"token":"t","environment_id":"env-1","expires_at":1,"extra":1}`, "", 0},
		{"duplicate member", `{"version":1,"version":1,"token":"t","environment_id":"env-1","expires_at":1}`, "", 0},
		{"version 2", `{"version":2,"token":"t","environment_id":"env-1","expires_at":1}`, "", 0},
		{"version 0", `{"version":0,"token":"t","environment_id":"env-1","expires_at":1}`, "", 0},
		{"version float", `{"version":1.0,"token":"t","environment_id":"env-1","expires_at":1}`, "", 0},
		{"version string", `{"version":"1","token":"t","environment_id":"env-1","expires_at":1}`, "", 0},
		{"expiry string", `{"version":1,"token":"t","environment_id":"env-1","expires_at":"1"}`, "", 0},
		{"expiry float", `{"version":1,"token":"t","environment_id":"env-1","expires_at":1.5}`, "", 0},
		{"expiry exponent", `{"version":1,"token":"t","environment_id":"env-1","expires_at":1e9}`, "", 0},
		{"expiry negative", `{"version":1,"token":"t","environment_id":"env-1","expires_at":-1}`, "", 0},
		{"expiry minus zero", `{"version":1,"token":"t","environment_id":"env-1","expires_at":-0}`, "", 0},
		{"expiry leading zero", `{"version":1,"token":"t","environment_id":"env-1","expires_at":01}`, "", 0},
		{"expiry overflow", `{"version":1,"token":"t","environment_id":"env-1","expires_at":18446744073709551616}`, "", 0},
		{"empty token", frameLine("", "env-1", 1), "", 0},
		{"blank token", frameLine("   ", "env-1", 1), "", 0},
		{"padded token", frameLine(" tok ", "env-1", 1), "", 0},
		{"inner space", frameLine("a b", "env-1", 1), "", 0},
		{"tab", frameLine("a\tb", "env-1", 1), "", 0},
		{"control", frameLine("a\x01b", "env-1", 1), "", 0},
		{"non-ASCII", frameLine("tök", "env-1", 1), "", 0},
		{"invalid UTF-8", `{"version":1,"token":"t` + "\xff" + `","environment_id":"env-1","expires_at":1}`, "", 0},
		{"lone high surrogate", `{"version":1,"token":"t","environment_id":"env-1\ud800","expires_at":1}`, "", 0},
		{"lone low surrogate", `{"version":1,"token":"t","environment_id":"\udc00","expires_at":1}`, "", 0},
		{"trailing value", frameLine("t", "env-1", 1) + ` {}`, "", 0},
		{"trailing NUL", frameLine("t", "env-1", 1) + "\x00", "", 0},
		{"short array", `[1,"env-1","tok"]`, "", 0},
		{"long array", `[1,"env-1","tok",7,5]`, "", 0},
		{"array order", `[1,"env-1",7,"tok"]`, "", 0},
		{"null", `null`, "", 0},
		{"number", `1`, "", 0},
		{"string", `"tok"`, "", 0},
		{"plain bearer", `tok-A`, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := client.DecodeCredentialFrame([]byte(tt.line))
			if tt.token == "" {
				if !errors.Is(err, client.ErrInvalidCredentialFrame) {
					t.Fatalf("got %v, want ErrInvalidCredentialFrame", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want a frame", err)
			}
			if f.Token() != tt.token || f.ExpiresAt != tt.exp || f.Version != 1 {
				t.Errorf("got token %q expires_at %d version %d, want %q %d 1", f.Token(), f.ExpiresAt, f.Version, tt.token, tt.exp)
			}
		})
	}
}

func TestCredentialFrame_Check(t *testing.T) {
	now := frameNow.Unix()
	tests := []struct {
		name string
		env  string
		exp  int64
		want error
	}{
		{"valid", "env-1", now + 1, nil},
		{"expires now", "env-1", now, client.ErrCredentialExpired},
		{"expired", "env-1", 0, client.ErrCredentialExpired},
		{"other environment", "env-2", now + 3600, client.ErrCredentialWrongEnvironment},
		{"environment not trimmed", " env-1", now + 3600, client.ErrCredentialWrongEnvironment},
		// the environment is checked before expiry (observed)
		{"other environment and expired", "env-2", 0, client.ErrCredentialWrongEnvironment},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := client.DecodeCredentialFrame([]byte(frameLine("tok", tt.env, uint64(tt.exp))))
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Check("env-1", frameNow.Add(999*time.Millisecond)); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCredentialFrame_Redacted(t *testing.T) {
	f, err := client.DecodeCredentialFrame([]byte(frameLine("tok-SECRET", "env-1", 1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{fmt.Sprint(f), fmt.Sprintf("%+v", f), fmt.Sprintf("%#v", f), f.LogValue().String()} {
		if strings.Contains(s, "SECRET") {
			t.Errorf("got %q, want the token redacted", s)
		}
	}
}

// FuzzDecodeCredentialFrame checks that the decoder never panics, that an accepted frame
// satisfies the frame rules, and that it re-encodes to a frame that decodes identically.
func FuzzDecodeCredentialFrame(f *testing.F) {
	f.Add([]byte(frameLine("tok-A", "env-1", 1795994798)))
	f.Add([]byte(`[1,"env-1","tok",7]`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		fr, err := client.DecodeCredentialFrame(line)
		if err != nil {
			if !errors.Is(err, client.ErrInvalidCredentialFrame) {
				t.Fatalf("got %v, want only ErrInvalidCredentialFrame", err)
			}
			return
		}
		tok := fr.Token()
		if fr.Version != 1 || tok == "" {
			t.Fatalf("accepted version %d, token length %d", fr.Version, len(tok))
		}
		for i := 0; i < len(tok); i++ {
			if tok[i] < 0x21 || tok[i] > 0x7e {
				t.Fatalf("accepted token byte %#x", tok[i])
			}
		}
		again, err := client.DecodeCredentialFrame([]byte(frameLine(tok, fr.EnvironmentID, fr.ExpiresAt)))
		if err != nil || again != fr {
			t.Fatalf("re-encoded frame: got %v, %v; want %v", again, err, fr)
		}
	})
}
