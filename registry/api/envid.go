package api

import (
	"errors"
	"strings"
)

// Environment-id errors, with the texts of spec/registry-auth.md §6 (Go column).
var (
	ErrEnvironmentIDRequired = errors.New("environment id is required for remote exec-server registration")
	ErrEnvironmentIDCharset  = errors.New("environment id must contain only ASCII letters, numbers, '-' or '_'")
	ErrEnvironmentIDTooLong  = errors.New("environment id cannot be longer than 256 characters")
)

// ValidateEnvironmentID trims surrounding whitespace and checks the result is 1–256 bytes
// of [A-Za-z0-9_-] (spec/registry-auth.md §6). It returns the trimmed id.
func ValidateEnvironmentID(id string) (string, error) {
	id = strings.TrimSpace(id)
	switch {
	case id == "":
		return "", ErrEnvironmentIDRequired
	case len(id) > MaxEnvironmentIDLen:
		return "", ErrEnvironmentIDTooLong
	}
	for i := 0; i < len(id); i++ {
		if !idByte(id[i]) {
			return "", ErrEnvironmentIDCharset
		}
	}
	return id, nil
}

func idByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// ErrInvalidRegistrationID is returned by ValidateRegistrationID (spec/registry-auth.md
// §3.2, earlier reference rule).
var ErrInvalidRegistrationID = errors.New("environment registry returned an invalid executor registration id")

// ValidateRegistrationID rejects a registration id that is blank, longer than
// MaxRegistrationIDLen bytes, or carries surrounding whitespace. A compliant registry
// never sends those.
func ValidateRegistrationID(id string) error {
	if strings.TrimSpace(id) == "" || len(id) > MaxRegistrationIDLen || strings.TrimSpace(id) != id {
		return ErrInvalidRegistrationID
	}
	return nil
}
