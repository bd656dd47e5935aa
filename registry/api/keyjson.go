package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
)

// KeySuite is the only suite label of public-key JSON (spec/registry-auth.md §9).
const KeySuite = "Noise_hybridIK_X25519+MLKEM768_AESGCM_SHA256"

// Public-key component sizes in bytes (spec/relay-noise.md §5.2).
const (
	x25519KeyLen = 32
	mlkemKeyLen  = 1184
)

// ErrInvalidPublicKey is returned by CanonicalPublicKey for anything but a well-formed
// public-key JSON object.
var ErrInvalidPublicKey = errors.New("registry: invalid public key json")

// CanonicalPublicKey checks a public-key JSON object (spec/registry-auth.md §9: exactly
// suite, x25519_public_key, mlkem768_public_key; standard padded base64 of 32 and 1184
// bytes) and returns its canonical encoding (members in that order, no whitespace), so two
// encodings of one key compare equal. The registry treats keys as opaque otherwise.
func CanonicalPublicKey(raw json.RawMessage) ([]byte, error) {
	var k struct {
		Suite  string `json:"suite"`
		X25519 string `json:"x25519_public_key"`
		MLKEM  string `json:"mlkem768_public_key"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&k); err != nil || dec.More() {
		return nil, ErrInvalidPublicKey
	}
	if k.Suite != KeySuite || !b64Len(k.X25519, x25519KeyLen) || !b64Len(k.MLKEM, mlkemKeyLen) {
		return nil, ErrInvalidPublicKey
	}
	out, err := json.Marshal(struct {
		Suite  string `json:"suite"`
		X25519 string `json:"x25519_public_key"`
		MLKEM  string `json:"mlkem768_public_key"`
	}{k.Suite, k.X25519, k.MLKEM})
	if err != nil {
		return nil, ErrInvalidPublicKey
	}
	return out, nil
}

func b64Len(s string, n int) bool {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	return err == nil && len(b) == n
}
