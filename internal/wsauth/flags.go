package wsauth

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Mode is a --ws-auth value.
type Mode uint8

const (
	// ModeNone: no --ws-auth; every upgrade is accepted.
	ModeNone Mode = iota
	// ModeCapabilityToken: `--ws-auth capability-token`.
	ModeCapabilityToken
	// ModeSignedBearerToken: `--ws-auth signed-bearer-token`.
	ModeSignedBearerToken
)

// String returns the flag spelling ("capability-token"), or "none".
func (m Mode) String() string {
	switch m {
	case ModeCapabilityToken:
		return "capability-token"
	case ModeSignedBearerToken:
		return "signed-bearer-token"
	}
	return "none"
}

// ParseMode parses a --ws-auth value. The error lists the possible values.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "capability-token":
		return ModeCapabilityToken, nil
	case "signed-bearer-token":
		return ModeSignedBearerToken, nil
	}
	return ModeNone, fmt.Errorf("invalid value '%s' for '--ws-auth <MODE>' [possible values: capability-token, signed-bearer-token]", s)
}

// Flags are the raw --ws-* command-line values. A nil pointer means the flag was not
// given; a given flag counts even when its value is empty, as in the reference.
type Flags struct {
	Mode                *Mode
	TokenFile           *string
	TokenSHA256         *string
	SharedSecretFile    *string
	Issuer              *string
	Audience            *string
	MaxClockSkewSeconds *uint64
}

// Any reports whether any --ws-* flag was given.
func (f Flags) Any() bool {
	return f.Mode != nil || f.TokenFile != nil || f.TokenSHA256 != nil || f.SharedSecretFile != nil ||
		f.Issuer != nil || f.Audience != nil || f.MaxClockSkewSeconds != nil
}

// Settings is a checked listener-auth configuration; files are not read yet (Load does).
// The zero value is ModeNone.
type Settings struct {
	Mode Mode
	// TokenFile is the absolute, cleaned capability-token file; "" with TokenSHA256.
	TokenFile string
	// TokenSHA256 is the capability token's digest when given by --ws-token-sha256.
	TokenSHA256 *[32]byte
	// SharedSecretFile is the absolute, cleaned signed-bearer-token secret file.
	SharedSecretFile string
	// Issuer and Audience are the expected iss and aud, trimmed; "" = not checked.
	Issuer, Audience string
	// MaxClockSkewSeconds is the exp/nbf tolerance, in seconds.
	MaxClockSkewSeconds uint64
}

// Settings checks the flag combination exactly as the reference does, in its order, and
// returns the reference's error texts (each exits 1 there). Relative paths are resolved
// against the working directory and `~/` against $HOME, then cleaned lexically.
func (f Flags) Settings() (Settings, error) {
	mode := ModeNone
	if f.Mode != nil {
		mode = *f.Mode
	}
	switch mode {
	case ModeCapabilityToken:
		if f.SharedSecretFile != nil || f.Issuer != nil || f.Audience != nil || f.MaxClockSkewSeconds != nil {
			return Settings{}, errors.New("`--ws-shared-secret-file`, `--ws-issuer`, `--ws-audience`, and `--ws-max-clock-skew-seconds` require `--ws-auth signed-bearer-token`")
		}
		s := Settings{Mode: mode}
		switch {
		case f.TokenFile != nil && f.TokenSHA256 != nil:
			return Settings{}, errors.New("`--ws-token-file` and `--ws-token-sha256` are mutually exclusive")
		case f.TokenFile != nil:
			p, err := absolutePath("--ws-token-file", *f.TokenFile)
			if err != nil {
				return Settings{}, err
			}
			s.TokenFile = p
		case f.TokenSHA256 != nil:
			d, err := parseSHA256("--ws-token-sha256", *f.TokenSHA256)
			if err != nil {
				return Settings{}, err
			}
			s.TokenSHA256 = &d
		default:
			return Settings{}, errors.New("`--ws-token-file` or `--ws-token-sha256` is required when `--ws-auth capability-token` is set")
		}
		return s, nil
	case ModeSignedBearerToken:
		if f.TokenFile != nil || f.TokenSHA256 != nil {
			return Settings{}, errors.New("`--ws-token-file` and `--ws-token-sha256` require `--ws-auth capability-token`, not `signed-bearer-token`")
		}
		if f.SharedSecretFile == nil {
			return Settings{}, errors.New("`--ws-shared-secret-file` is required when `--ws-auth signed-bearer-token` is set")
		}
		p, err := absolutePath("--ws-shared-secret-file", *f.SharedSecretFile)
		if err != nil {
			return Settings{}, err
		}
		s := Settings{Mode: mode, SharedSecretFile: p, MaxClockSkewSeconds: uint64(DefaultMaxClockSkew.Seconds())}
		if f.Issuer != nil {
			s.Issuer = strings.TrimSpace(*f.Issuer)
		}
		if f.Audience != nil {
			s.Audience = strings.TrimSpace(*f.Audience)
		}
		if f.MaxClockSkewSeconds != nil {
			s.MaxClockSkewSeconds = *f.MaxClockSkewSeconds
		}
		return s, nil
	}
	if f.Any() {
		return Settings{}, errors.New("websocket auth flags require `--ws-auth capability-token` or `--ws-auth signed-bearer-token`")
	}
	return Settings{}, nil
}

// checkSkew is the reference's start-up check that the skew fits an i64.
func checkSkew(sec uint64) error {
	if sec > math.MaxInt64 {
		return errors.New("websocket auth clock skew must fit in a signed 64-bit integer")
	}
	return nil
}

// absolutePath resolves p as the reference's AbsolutePathBuf does: `~` and `~/…` from
// $HOME, relative paths from the working directory, then a lexical clean.
func absolutePath(flag, p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("%s must be an absolute path", flag)
		}
		p = filepath.Join(wd, p)
	}
	return filepath.Clean(p), nil
}

// parseSHA256 parses 64 hex digits (either case) after trimming whitespace.
func parseSHA256(flag, v string) ([32]byte, error) {
	var d [32]byte
	v = strings.TrimSpace(v)
	if len(v) != tokenSHA256HexLen {
		return d, fmt.Errorf("%s must be a 64-character hex SHA-256 digest", flag)
	}
	if _, err := hex.Decode(d[:], []byte(v)); err != nil {
		return d, fmt.Errorf("%s must be a 64-character hex SHA-256 digest", flag)
	}
	return d, nil
}
