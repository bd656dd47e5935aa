package noise

// Public-key JSON (spec/registry-auth.md §9), members in this order, nothing else:
//
//	{"suite":"Noise_hybridIK_X25519+MLKEM768_AESGCM_SHA256",
//	 "x25519_public_key":"<44 chars: padded standard base64 of 32 bytes>",
//	 "mlkem768_public_key":"<1580 chars: padded standard base64 of 1184 bytes>"}

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// Decode errors (texts as the reference's, spec/registry-auth.md §9).
var (
	ErrUnsupportedSuite   = errors.New("unsupported Noise channel suite")
	ErrInvalidX25519      = errors.New("invalid X25519 public key")
	ErrInvalidX25519Len   = errors.New("invalid X25519 public key length")
	ErrInvalidMLKEM       = errors.New("invalid ML-KEM-768 public key")
	ErrInvalidMLKEMLen    = errors.New("invalid ML-KEM-768 public key length")
	ErrInvalidKeyJSON     = errors.New("invalid Noise public key JSON")
	errMissingKeyJSONItem = fmt.Errorf("%w: missing member", ErrInvalidKeyJSON)
)

type publicKeyJSON struct {
	Suite  *string `json:"suite"`
	X25519 *string `json:"x25519_public_key"`
	MLKEM  *string `json:"mlkem768_public_key"`
}

// MarshalJSON encodes the key in the registry form, members in spec order.
func (pk PublicKey) MarshalJSON() ([]byte, error) { return pk.AppendJSON(nil), nil }

// AppendJSON appends the registry JSON form of pk to b.
func (pk *PublicKey) AppendJSON(b []byte) []byte {
	b = append(b, `{"suite":"`+SuiteLabel+`","x25519_public_key":"`...)
	b = base64.StdEncoding.AppendEncode(b, pk.X25519[:])
	b = append(b, `","mlkem768_public_key":"`...)
	b = base64.StdEncoding.AppendEncode(b, pk.MLKEM768[:])
	return append(b, `"}`...)
}

// UnmarshalJSON decodes the registry form strictly: exactly the three members, the exact
// suite, padded standard base64, exact lengths, and an ML-KEM key that passes the FIPS
// 203 encoding check. On error pk is left unchanged.
func (pk *PublicKey) UnmarshalJSON(data []byte) error {
	var raw publicKeyJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidKeyJSON, sanitizeJSONErr(err))
	}
	if dec.More() {
		return fmt.Errorf("%w: trailing data", ErrInvalidKeyJSON)
	}
	if raw.Suite == nil || raw.X25519 == nil || raw.MLKEM == nil {
		return errMissingKeyJSONItem
	}
	if *raw.Suite != SuiteLabel {
		return ErrUnsupportedSuite
	}
	var out PublicKey
	if err := decodeKeyB64(out.X25519[:], *raw.X25519, ErrInvalidX25519, ErrInvalidX25519Len); err != nil {
		return err
	}
	if err := decodeKeyB64(out.MLKEM768[:], *raw.MLKEM, ErrInvalidMLKEM, ErrInvalidMLKEMLen); err != nil {
		return err
	}
	if out.Validate() != nil {
		return ErrInvalidMLKEM
	}
	*pk = out
	return nil
}

// ParsePublicKeyJSON decodes a registry public-key JSON object.
func ParsePublicKeyJSON(data []byte) (PublicKey, error) {
	var pk PublicKey
	err := pk.UnmarshalJSON(data)
	return pk, err
}

func decodeKeyB64(dst []byte, s string, errInvalid, errLen error) error {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return errInvalid
	}
	if len(b) != len(dst) {
		return errLen
	}
	copy(dst, b)
	return nil
}

// sanitizeJSONErr keeps the error class but drops any echo of the input (the JSON
// decoder quotes offending values, which could be key material).
func sanitizeJSONErr(err error) error {
	var synErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &synErr):
		return fmt.Errorf("syntax error at offset %d", synErr.Offset)
	case errors.As(err, &typeErr):
		return fmt.Errorf("member %q has the wrong type", typeErr.Field)
	default:
		// DisallowUnknownFields reports `json: unknown field "name"`; member names are not
		// secret, so keep the message.
		return err
	}
}
