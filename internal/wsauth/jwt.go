package wsauth

// Compact JWT, HS256 only (RFC 7519 / RFC 7515), as the reference's jsonwebtoken
// validation accepts it:
//
//	base64url(header JSON) "." base64url(claims JSON) "." base64url(HMAC-SHA256(key, header "." claims))
//
// Each part is unpadded base64url with canonical trailing bits. The header is a JSON
// object whose "alg" is "HS256" (typ, cty, kid, … optional strings). The claims object
// has an integer "exp" (required), optional integer "nbf", string "iss" and "aud" (a
// string or an array of strings); other members are ignored. Only the signature step
// uses the key, and it compares in constant time.

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Claims are the registered claims the listener checks.
type Claims struct {
	Exp int64
	Nbf *int64
	Iss *string
	// Aud holds the audience: one element for a string claim; nil when absent or null.
	Aud []string
}

func (c Claims) hasAudience(want string) bool {
	for _, a := range c.Aud {
		if a == want {
			return true
		}
	}
	return false
}

// ErrInvalidJWT is returned (wrapped) for every token DecodeHS256 refuses.
var ErrInvalidJWT = errors.New("wsauth: invalid jwt")

var b64 = base64.RawURLEncoding.Strict()

// DecodeHS256 verifies token's HS256 signature with key and decodes its claims. It does
// not check exp, nbf, iss or aud (Policy.Authorize does).
func DecodeHS256(token string, key []byte) (Claims, error) {
	sig, rest, ok := cutLast(token)
	if !ok {
		return Claims{}, fmt.Errorf("%w: want three parts", ErrInvalidJWT)
	}
	payload, header, ok := cutLast(rest)
	if !ok {
		return Claims{}, fmt.Errorf("%w: want three parts", ErrInvalidJWT)
	}
	hb, err := decodePart(header)
	if err != nil {
		return Claims{}, fmt.Errorf("%w: header: %v", ErrInvalidJWT, err)
	}
	if err := checkHeader(hb); err != nil {
		return Claims{}, fmt.Errorf("%w: header: %v", ErrInvalidJWT, err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(rest))
	var want [sha256.Size]byte
	wantB64 := make([]byte, 0, b64.EncodedLen(len(want)))
	wantB64 = b64.AppendEncode(wantB64, mac.Sum(want[:0]))
	if !hmac.Equal(wantB64, []byte(sig)) {
		return Claims{}, fmt.Errorf("%w: signature mismatch", ErrInvalidJWT)
	}
	pb, err := decodePart(payload)
	if err != nil {
		return Claims{}, fmt.Errorf("%w: claims: %v", ErrInvalidJWT, err)
	}
	c, err := parseClaims(pb)
	if err != nil {
		return Claims{}, fmt.Errorf("%w: claims: %v", ErrInvalidJWT, err)
	}
	return c, nil
}

// cutLast splits s at its last '.': (after, before).
func cutLast(s string) (after, before string, ok bool) {
	i := strings.LastIndexByte(s, '.')
	if i < 0 {
		return "", "", false
	}
	return s[i+1:], s[:i], true
}

// decodePart decodes strict unpadded base64url. Go's decoder skips CR and LF; the
// reference's does not, so any byte outside the alphabet is refused first.
func decodePart(s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return nil, errors.New("not base64url")
		}
	}
	return b64.DecodeString(s)
}

// object decodes a JSON object's members in order, as raw values. Duplicate names are
// reported in dup (first duplicate only). Trailing data after the object is an error.
func object(b []byte) (members map[string]json.RawMessage, dup string, err error) {
	if !utf8.Valid(b) {
		return nil, "", errors.New("invalid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, "", err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, "", errors.New("not an object")
	}
	members = map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, "", err
		}
		name, ok := tok.(string)
		if !ok {
			return nil, "", errors.New("bad member name")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, "", err
		}
		if _, seen := members[name]; seen && dup == "" {
			dup = name
		}
		members[name] = v
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, "", err
	}
	// Only JSON whitespace may follow (a decoder error here would otherwise hide data).
	if len(bytes.TrimLeft(b[dec.InputOffset():], " \t\r\n")) != 0 {
		return nil, "", errors.New("trailing data")
	}
	return members, dup, nil
}

// headerStringFields are the optional string members of the reference's JWT header type.
var headerStringFields = []string{"typ", "cty", "jku", "kid", "x5u", "x5t", "x5t#S256"}

func checkHeader(b []byte) error {
	m, dup, err := object(b)
	if err != nil {
		return err
	}
	if dup != "" && (dup == "alg" || dup == "x5c" || dup == "jwk" || contains(headerStringFields, dup)) {
		return fmt.Errorf("duplicate member %q", dup)
	}
	alg, ok := m["alg"]
	if !ok {
		return errors.New("missing alg")
	}
	var a string
	if err := json.Unmarshal(alg, &a); err != nil || isNull(alg) || a != "HS256" {
		return errors.New("alg is not HS256")
	}
	for _, f := range headerStringFields {
		if v, ok := m[f]; ok && !isNull(v) {
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return fmt.Errorf("%s is not a string", f)
			}
		}
	}
	if v, ok := m["x5c"]; ok && !isNull(v) {
		var s []string
		if err := json.Unmarshal(v, &s); err != nil || hasNullElem(v) {
			return errors.New("x5c is not an array of strings")
		}
	}
	if v, ok := m["jwk"]; ok && !isNull(v) {
		// A full JWK is never needed for HS256; refusing it is stricter than the reference.
		return errors.New("jwk header member not supported")
	}
	return nil
}

func parseClaims(b []byte) (Claims, error) {
	m, dup, err := object(b)
	if err != nil {
		return Claims{}, err
	}
	switch dup {
	case "exp", "nbf", "iss", "aud", "sub":
		return Claims{}, fmt.Errorf("duplicate member %q", dup)
	}
	var c Claims
	exp, ok := m["exp"]
	if !ok {
		return Claims{}, errors.New("missing exp")
	}
	if c.Exp, err = integer(exp); err != nil {
		return Claims{}, fmt.Errorf("exp: %v", err)
	}
	if v, ok := m["nbf"]; ok && !isNull(v) {
		n, err := integer(v)
		if err != nil {
			return Claims{}, fmt.Errorf("nbf: %v", err)
		}
		c.Nbf = &n
	}
	if v, ok := m["iss"]; ok && !isNull(v) {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return Claims{}, errors.New("iss is not a string")
		}
		c.Iss = &s
	}
	if v, ok := m["aud"]; ok && !isNull(v) {
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			c.Aud = []string{s}
		} else if err := json.Unmarshal(v, &c.Aud); err != nil || hasNullElem(v) || c.Aud == nil {
			return Claims{}, errors.New("aud is neither a string nor an array of strings")
		}
	}
	return c, nil
}

// integer parses a JSON number that is an integer literal in the int64 range (serde's
// i64: no fraction, no exponent, and not -0, which serde_json reads as a float).
func integer(v json.RawMessage) (int64, error) {
	s := string(bytes.TrimSpace(v))
	if s == "" || strings.ContainsAny(s, ".eE\"") || s == "null" || s == "-0" {
		return 0, errors.New("not an integer")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errors.New("not an int64")
	}
	return n, nil
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// hasNullElem reports whether a JSON array has a null element (which encoding/json would
// decode into "" for []string, while the reference refuses it).
func hasNullElem(v json.RawMessage) bool {
	var elems []json.RawMessage
	if err := json.Unmarshal(v, &elems); err != nil {
		return false
	}
	for _, e := range elems {
		if isNull(e) {
			return true
		}
	}
	return false
}
