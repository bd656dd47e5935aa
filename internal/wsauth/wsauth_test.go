package wsauth_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/internal/wsauth"
)

const testSecret = "0123456789abcdef0123456789abcdef"

func ptr[T any](v T) *T { return &v }

func sign(header, claims string, key []byte) string {
	enc := base64.RawURLEncoding
	msg := enc.EncodeToString([]byte(header)) + "." + enc.EncodeToString([]byte(claims))
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return msg + "." + enc.EncodeToString(m.Sum(nil))
}

func TestFlags_Settings(t *testing.T) {
	capMode, sbt := ptr(wsauth.ModeCapabilityToken), ptr(wsauth.ModeSignedBearerToken)
	hash := strings.Repeat("ab", 32)
	tests := []struct {
		name    string
		f       wsauth.Flags
		wantErr string
	}{
		{"none", wsauth.Flags{}, ""},
		{"flags without mode", wsauth.Flags{Issuer: ptr("")}, "websocket auth flags require `--ws-auth capability-token` or `--ws-auth signed-bearer-token`"},
		{"capability no source", wsauth.Flags{Mode: capMode}, "`--ws-token-file` or `--ws-token-sha256` is required when `--ws-auth capability-token` is set"},
		{"capability both", wsauth.Flags{Mode: capMode, TokenFile: ptr("/t"), TokenSHA256: ptr(hash)}, "`--ws-token-file` and `--ws-token-sha256` are mutually exclusive"},
		{"capability signed flags first", wsauth.Flags{Mode: capMode, TokenFile: ptr("/t"), TokenSHA256: ptr(hash), Audience: ptr("a")}, "`--ws-shared-secret-file`, `--ws-issuer`, `--ws-audience`, and `--ws-max-clock-skew-seconds` require `--ws-auth signed-bearer-token`"},
		{"bad hash", wsauth.Flags{Mode: capMode, TokenSHA256: ptr(hash[:63] + "g")}, "--ws-token-sha256 must be a 64-character hex SHA-256 digest"},
		{"short hash", wsauth.Flags{Mode: capMode, TokenSHA256: ptr("ab")}, "--ws-token-sha256 must be a 64-character hex SHA-256 digest"},
		{"hash with spaces", wsauth.Flags{Mode: capMode, TokenSHA256: ptr(" " + strings.ToUpper(hash) + "\n")}, ""},
		{"signed no secret", wsauth.Flags{Mode: sbt}, "`--ws-shared-secret-file` is required when `--ws-auth signed-bearer-token` is set"},
		{"signed with token", wsauth.Flags{Mode: sbt, TokenSHA256: ptr("")}, "`--ws-token-file` and `--ws-token-sha256` require `--ws-auth capability-token`, not `signed-bearer-token`"},
		{"signed ok", wsauth.Flags{Mode: sbt, SharedSecretFile: ptr("s"), Issuer: ptr(" i "), Audience: ptr(" ")}, ""},
	}
	for _, tt := range tests {
		s, err := tt.f.Settings()
		switch {
		case tt.wantErr != "":
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.name == "signed ok":
			wd, _ := os.Getwd()
			if s.SharedSecretFile != filepath.Join(wd, "s") || s.Issuer != "i" || s.Audience != "" || s.MaxClockSkewSeconds != 30 {
				t.Errorf("%s: got %+v", tt.name, s)
			}
		}
	}
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoad_Errors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		s       wsauth.Settings
		wantErr string
	}{
		{wsauth.Settings{Mode: wsauth.ModeCapabilityToken, TokenFile: dir + "/nope"}, "failed to read websocket auth secret " + dir + "/nope: No such file or directory (os error 2)"},
		{wsauth.Settings{Mode: wsauth.ModeCapabilityToken, TokenFile: dir}, "failed to read websocket auth secret " + dir + ": Is a directory (os error 21)"},
		{wsauth.Settings{Mode: wsauth.ModeCapabilityToken, TokenFile: writeFile(t, " \n")}, "must not be empty"},
		{wsauth.Settings{Mode: wsauth.ModeCapabilityToken, TokenFile: writeFile(t, "\xff")}, "stream did not contain valid UTF-8"},
		{wsauth.Settings{Mode: wsauth.ModeCapabilityToken, TokenFile: writeFile(t, strings.Repeat("x", wsauth.MaxSecretFileBytes+1))}, "larger than"},
		{wsauth.Settings{Mode: wsauth.ModeSignedBearerToken, SharedSecretFile: writeFile(t, " short \n")}, "must be at least 32 bytes"},
		{wsauth.Settings{Mode: wsauth.ModeSignedBearerToken, SharedSecretFile: writeFile(t, testSecret), MaxClockSkewSeconds: 1 << 63}, "websocket auth clock skew must fit in a signed 64-bit integer"},
	}
	for _, tt := range tests {
		_, err := wsauth.Load(tt.s)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("Load(%+v) = %v, want %q", tt.s, err, tt.wantErr)
		}
	}
}

func TestPolicy_CapabilityToken(t *testing.T) {
	fromFile, err := wsauth.Load(wsauth.Settings{Mode: wsauth.ModeCapabilityToken, TokenFile: writeFile(t, "\n  tok-1 \n")})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("tok-1"))
	s, err := wsauth.Flags{Mode: ptr(wsauth.ModeCapabilityToken), TokenSHA256: ptr(hex.EncodeToString(sum[:]))}.Settings()
	if err != nil {
		t.Fatal(err)
	}
	fromHash, err := wsauth.Load(s)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		auth []string
		want string // "" = accepted
	}{
		{nil, wsauth.MsgMissingBearer},
		{[]string{"Bearer tok-1"}, ""},
		{[]string{"bEaReR    tok-1  "}, ""},
		{[]string{"Bearer tok-2"}, wsauth.MsgInvalidBearer},
		{[]string{"Bearer tok-1x"}, wsauth.MsgInvalidBearer},
		{[]string{"Bearer"}, wsauth.MsgInvalidHeader},
		{[]string{"Bearer "}, wsauth.MsgInvalidHeader},
		{[]string{"Bearer\ttok-1"}, wsauth.MsgInvalidHeader},
		{[]string{"Basic tok-1"}, wsauth.MsgInvalidHeader},
		{[]string{"Bearer t\u00f6k"}, wsauth.MsgInvalidHeader},
		{[]string{"Bearer tok-2", "Bearer tok-1"}, wsauth.MsgInvalidBearer},
		{[]string{"Bearer tok-1", "Bearer tok-2"}, ""},
	}
	for _, p := range []*wsauth.Policy{fromFile, fromHash} {
		for _, tt := range tests {
			h := http.Header{}
			for _, a := range tt.auth {
				h.Add("Authorization", a)
			}
			got := ""
			if e := p.Authorize(h, time.Now()); e != nil {
				if e.Status != http.StatusUnauthorized {
					t.Errorf("%q: status %d", tt.auth, e.Status)
				}
				got = e.Message
			}
			if got != tt.want {
				t.Errorf("%v: Authorize(%q) = %q, want %q", p, tt.auth, got, tt.want)
			}
		}
	}
	if s := fromFile.String(); strings.Contains(s, "tok-1") || strings.Contains(s, hex.EncodeToString(sum[:])) {
		t.Errorf("String() leaks the token: %q", s)
	}
}

func TestPolicy_SignedBearerToken(t *testing.T) {
	p, err := wsauth.Load(wsauth.Settings{Mode: wsauth.ModeSignedBearerToken, SharedSecretFile: writeFile(t, testSecret+"\n"),
		Issuer: "iss", Audience: "aud", MaxClockSkewSeconds: 30})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	n := now.Unix()
	key := []byte(testSecret)
	hdr := `{"alg":"HS256","typ":"JWT"}`
	tests := []struct {
		name, tok, want string
	}{
		{"valid", sign(hdr, fmt.Sprintf(`{"exp":%d,"iss":"iss","aud":"aud"}`, n+60), key), ""},
		{"aud array", sign(hdr, fmt.Sprintf(`{"exp":%d,"iss":"iss","aud":["x","aud"]}`, n+60), key), ""},
		{"exp at skew edge", sign(hdr, fmt.Sprintf(`{"exp":%d,"iss":"iss","aud":"aud"}`, n-30), key), ""},
		{"expired", sign(hdr, fmt.Sprintf(`{"exp":%d,"iss":"iss","aud":"aud"}`, n-31), key), wsauth.MsgExpiredJWT},
		{"nbf at skew edge", sign(hdr, fmt.Sprintf(`{"exp":%d,"nbf":%d,"iss":"iss","aud":"aud"}`, n+60, n+30), key), ""},
		{"not yet valid", sign(hdr, fmt.Sprintf(`{"exp":%d,"nbf":%d,"iss":"iss","aud":"aud"}`, n+60, n+31), key), wsauth.MsgJWTNotYetValid},
		{"issuer", sign(hdr, fmt.Sprintf(`{"exp":%d,"iss":"other","aud":"aud"}`, n+60), key), wsauth.MsgIssuerMismatch},
		{"no issuer", sign(hdr, fmt.Sprintf(`{"exp":%d,"aud":"aud"}`, n+60), key), wsauth.MsgIssuerMismatch},
		{"audience", sign(hdr, fmt.Sprintf(`{"exp":%d,"iss":"iss","aud":["x"]}`, n+60), key), wsauth.MsgAudienceMismach},
		{"saturating exp", sign(hdr, `{"exp":9223372036854775807,"iss":"iss","aud":"aud"}`, key), ""},
		{"saturating nbf", sign(hdr, fmt.Sprintf(`{"exp":%d,"nbf":-9223372036854775808,"iss":"iss","aud":"aud"}`, n+60), key), ""},
		{"no exp", sign(hdr, `{"iss":"iss","aud":"aud"}`, key), wsauth.MsgInvalidJWT},
		{"exp -0 (a float to serde)", sign(hdr, `{"exp":-0,"iss":"iss","aud":"aud"}`, key), wsauth.MsgInvalidJWT},
		{"trailing data", sign(hdr+"x", fmt.Sprintf(`{"exp":%d,"iss":"iss","aud":"aud"}`, n+60), key), wsauth.MsgInvalidJWT},
		{"wrong key", sign(hdr, fmt.Sprintf(`{"exp":%d,"iss":"iss","aud":"aud"}`, n+60), []byte(strings.Repeat("z", 32))), wsauth.MsgInvalidJWT},
		{"alg none", sign(`{"alg":"none"}`, fmt.Sprintf(`{"exp":%d}`, n+60), key), wsauth.MsgInvalidJWT},
		{"oversize", strings.Repeat("a", wsauth.MaxBearerBytes+1), wsauth.MsgInvalidJWT},
	}
	for _, tt := range tests {
		h := http.Header{"Authorization": {"Bearer " + tt.tok}}
		got := ""
		if e := p.Authorize(h, now); e != nil {
			got = e.Message
		}
		if got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
	if s := p.String(); strings.Contains(s, testSecret) {
		t.Errorf("String() leaks the secret: %q", s)
	}
}

func TestDecodeHS256_Tampering(t *testing.T) {
	key := []byte(testSecret)
	tok := sign(`{"alg":"HS256"}`, `{"exp":1,"iss":"a"}`, key)
	if _, err := wsauth.DecodeHS256(tok, key); err != nil {
		t.Fatalf("valid token: %v", err)
	}
	// Flipping any character (to another base64url character) breaks the token.
	alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := range tok {
		if tok[i] == '.' {
			continue
		}
		b := []byte(tok)
		b[i] = alphabet[(strings.IndexByte(alphabet, b[i])+1)%len(alphabet)]
		if _, err := wsauth.DecodeHS256(string(b), key); !errors.Is(err, wsauth.ErrInvalidJWT) {
			t.Errorf("flip at %d accepted (err %v)", i, err)
		}
	}
}
