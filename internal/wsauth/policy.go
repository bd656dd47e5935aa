package wsauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/execlab/executor/internal/oserr"
)

// 401 bodies, exactly as the reference sends them (text/plain; charset=utf-8).
const (
	MsgMissingBearer   = "missing websocket bearer token"
	MsgInvalidHeader   = "invalid authorization header"
	MsgInvalidBearer   = "invalid websocket bearer token"
	MsgInvalidJWT      = "invalid websocket jwt"
	MsgExpiredJWT      = "expired websocket jwt"
	MsgJWTNotYetValid  = "websocket jwt is not valid yet"
	MsgIssuerMismatch  = "websocket jwt issuer mismatch"
	MsgAudienceMismach = "websocket jwt audience mismatch"
)

// Error is a refused upgrade: HTTP Status (always 401) with the fixed body Message. It
// never carries request data.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("websocket auth: %d %s", e.Status, e.Message) }

func unauthorized(msg string) *Error { return &Error{Status: http.StatusUnauthorized, Message: msg} }

// Policy authorizes upgrade requests. The zero value and nil accept everything (no
// --ws-auth). Immutable after Load; safe for concurrent use.
type Policy struct {
	mode        Mode
	tokenSHA256 [32]byte // capability-token
	secret      []byte   // signed-bearer-token HS256 key
	issuer      string   // "" = not checked
	audience    string   // "" = not checked
	skew        int64    // seconds
}

// Load reads the token or secret file named by s (once, at start-up) and returns the
// policy. Its errors are the reference's start-up texts (`failed to read websocket auth
// secret <path>: <reason>`, `websocket auth secret <path> must not be empty`, …).
func Load(s Settings) (*Policy, error) {
	p := &Policy{mode: s.Mode}
	switch s.Mode {
	case ModeNone:
		return p, nil
	case ModeCapabilityToken:
		if s.TokenSHA256 != nil {
			p.tokenSHA256 = *s.TokenSHA256
			return p, nil
		}
		tok, err := readTrimmedSecret(s.TokenFile)
		if err != nil {
			return nil, err
		}
		p.tokenSHA256 = sha256.Sum256([]byte(tok))
		return p, nil
	case ModeSignedBearerToken:
		sec, err := readTrimmedSecret(s.SharedSecretFile)
		if err != nil {
			return nil, err
		}
		if len(sec) < MinSharedSecretBytes {
			return nil, fmt.Errorf("signed websocket bearer secret %s must be at least %d bytes", s.SharedSecretFile, MinSharedSecretBytes)
		}
		if err := checkSkew(s.MaxClockSkewSeconds); err != nil {
			return nil, err
		}
		p.secret = []byte(sec)
		p.issuer, p.audience, p.skew = s.Issuer, s.Audience, int64(s.MaxClockSkewSeconds)
		return p, nil
	}
	return nil, errors.New("websocket auth: unknown mode")
}

// Mode returns the policy's mode (ModeNone for nil).
func (p *Policy) Mode() Mode {
	if p == nil {
		return ModeNone
	}
	return p.mode
}

// String describes the policy without its token, digest or secret.
func (p *Policy) String() string {
	if p == nil || p.mode == ModeNone {
		return "none"
	}
	if p.mode == ModeSignedBearerToken {
		return fmt.Sprintf("signed-bearer-token issuer=%q audience=%q skew=%ds secret=<redacted>", p.issuer, p.audience, p.skew)
	}
	return "capability-token token=<redacted>"
}

// Authorize checks an upgrade request's headers at time now. It returns nil when the
// request may upgrade, else a 401 *Error. Only the first Authorization header counts.
func (p *Policy) Authorize(h http.Header, now time.Time) *Error {
	if p == nil || p.mode == ModeNone {
		return nil
	}
	tok, err := bearer(h)
	if err != nil {
		return err
	}
	switch p.mode {
	case ModeCapabilityToken:
		got := sha256.Sum256([]byte(tok))
		if subtle.ConstantTimeCompare(got[:], p.tokenSHA256[:]) != 1 {
			return unauthorized(MsgInvalidBearer)
		}
		return nil
	case ModeSignedBearerToken:
		if len(tok) > MaxBearerBytes {
			return unauthorized(MsgInvalidJWT)
		}
		c, err := DecodeHS256(tok, p.secret)
		if err != nil {
			return unauthorized(MsgInvalidJWT)
		}
		return p.checkClaims(c, now.Unix())
	}
	return unauthorized(MsgInvalidBearer)
}

// checkClaims applies the reference's claim checks in its order.
func (p *Policy) checkClaims(c Claims, now int64) *Error {
	if now > satAdd(c.Exp, p.skew) {
		return unauthorized(MsgExpiredJWT)
	}
	if c.Nbf != nil && now < satSub(*c.Nbf, p.skew) {
		return unauthorized(MsgJWTNotYetValid)
	}
	if p.issuer != "" && (c.Iss == nil || *c.Iss != p.issuer) {
		return unauthorized(MsgIssuerMismatch)
	}
	if p.audience != "" && !c.hasAudience(p.audience) {
		return unauthorized(MsgAudienceMismach)
	}
	return nil
}

// bearer extracts the token of `authorization: Bearer <token>` as the reference does:
// the first header; visible ASCII (and tab) only; split at the first space; scheme
// case-insensitive; token trimmed and non-empty.
func bearer(h http.Header) (string, *Error) {
	vals := h.Values("Authorization")
	if len(vals) == 0 {
		return "", unauthorized(MsgMissingBearer)
	}
	v := vals[0]
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
			return "", unauthorized(MsgInvalidHeader)
		}
	}
	scheme, tok, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", unauthorized(MsgInvalidHeader)
	}
	tok = strings.TrimSpace(tok)
	if tok == "" {
		return "", unauthorized(MsgInvalidHeader)
	}
	return tok, nil
}

// ReadSecretFile reads a token file as the listener does (--ws-token-file): UTF-8, at most
// MaxSecretFileBytes, surrounding whitespace trimmed, empty refused. Clients use it so
// that one file serves both sides.
func ReadSecretFile(path string) (string, error) { return readTrimmedSecret(path) }

// readTrimmedSecret reads path (UTF-8, at most MaxSecretFileBytes) and trims whitespace;
// empty → error. Error texts are the reference's.
func readTrimmedSecret(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("failed to read websocket auth secret %s: %s", path, oserr.Text(unwrapPath(err)))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxSecretFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("failed to read websocket auth secret %s: %s", path, oserr.Text(unwrapPath(err)))
	}
	if len(b) > MaxSecretFileBytes {
		return "", fmt.Errorf("failed to read websocket auth secret %s: larger than %d bytes", path, MaxSecretFileBytes)
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("failed to read websocket auth secret %s: stream did not contain valid UTF-8", path)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("websocket auth secret %s must not be empty", path)
	}
	return s, nil
}

// unwrapPath drops os.PathError's "open <path>:" prefix; oserr renders the errno.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func satAdd(a, b int64) int64 {
	if b > 0 && a > (1<<63-1)-b {
		return 1<<63 - 1
	}
	return a + b
}

func satSub(a, b int64) int64 {
	if b > 0 && a < (-1<<63)+b {
		return -1 << 63
	}
	return a - b
}
