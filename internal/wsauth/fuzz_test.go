package wsauth_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/execlab/executor/internal/wsauth"
)

// FuzzDecodeHS256 feeds arbitrary tokens (seed corpus: testdata/fuzz/FuzzDecodeHS256)
// to the decoder: it must never panic, and whatever it accepts must re-verify.
func FuzzDecodeHS256(f *testing.F) {
	key := []byte(testSecret)
	f.Add(sign(`{"alg":"HS256","typ":"JWT"}`, `{"exp":1893456000,"iss":"i","aud":["a","b"]}`, key))
	f.Add("a.b.c")
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := wsauth.DecodeHS256(tok, key)
		if err != nil {
			if !errors.Is(err, wsauth.ErrInvalidJWT) {
				t.Fatalf("error %v does not wrap ErrInvalidJWT", err)
			}
			return
		}
		if _, err := wsauth.DecodeHS256(tok, []byte("another key of at least 32 bytes!!")); err == nil {
			t.Fatalf("token %q verifies under two keys", tok)
		}
		_ = c
	})
}

// FuzzClaims signs arbitrary header and claims JSON with the test key, so the fuzzer
// reaches the JSON checks behind the signature (seed corpus: testdata/fuzz/FuzzClaims).
// Accepted claims must agree with a plain decode of the same JSON.
func FuzzClaims(f *testing.F) {
	key := []byte(testSecret)
	f.Add(`{"alg":"HS256","typ":"JWT"}`, `{"exp":1893456000,"nbf":1,"iss":"i","aud":"a"}`)
	f.Add(`{"alg":"HS256"}`, `{"exp":-1,"aud":["a",1]}`)
	f.Fuzz(func(t *testing.T, header, claims string) {
		c, err := wsauth.DecodeHS256(sign(header, claims, key), key)
		if err != nil {
			return
		}
		var plain map[string]any
		dec := json.NewDecoder(bytes.NewReader([]byte(claims)))
		dec.UseNumber()
		if err := dec.Decode(&plain); err != nil {
			t.Fatalf("accepted claims %q that encoding/json refuses: %v", claims, err)
		}
		exp, ok := plain["exp"].(json.Number)
		n, err := exp.Int64()
		if !ok || err != nil || n != c.Exp {
			t.Fatalf("claims %q: exp %d, plain decode %v", claims, c.Exp, plain["exp"])
		}
		var h map[string]any
		if json.Unmarshal([]byte(header), &h) != nil || h["alg"] != "HS256" {
			t.Fatalf("accepted header %q", header)
		}
	})
}

// FuzzAuthorize drives the whole header check of a signed-bearer-token policy with
// arbitrary Authorization values: no panic, and only the documented 401 bodies.
func FuzzAuthorize(f *testing.F) {
	key := []byte(testSecret)
	f.Add("Bearer " + sign(`{"alg":"HS256"}`, `{"exp":1893456000,"iss":"i","aud":"a"}`, key))
	f.Add("bearer  x ")
	f.Add("Basic x")
	dir := f.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, key, 0o600); err != nil {
		f.Fatal(err)
	}
	p, err := wsauth.Load(wsauth.Settings{Mode: wsauth.ModeSignedBearerToken, SharedSecretFile: secret, Issuer: "i", Audience: "a", MaxClockSkewSeconds: 30})
	if err != nil {
		f.Fatal(err)
	}
	known := map[string]bool{wsauth.MsgMissingBearer: true, wsauth.MsgInvalidHeader: true, wsauth.MsgInvalidJWT: true,
		wsauth.MsgExpiredJWT: true, wsauth.MsgJWTNotYetValid: true, wsauth.MsgIssuerMismatch: true, wsauth.MsgAudienceMismach: true}
	now := time.Unix(1_800_000_000, 0)
	f.Fuzz(func(t *testing.T, v string) {
		e := p.Authorize(http.Header{"Authorization": {v}}, now)
		if e != nil && (e.Status != http.StatusUnauthorized || !known[e.Message]) {
			t.Fatalf("Authorize(%q) = %d %q", v, e.Status, e.Message)
		}
	})
}
