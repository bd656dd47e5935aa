package client

import (
	"errors"
	"fmt"
	"net/http"
)

// Register error kinds, for errors.Is on *Error.
var (
	// ErrAuthentication: the registry answered 401 or 403.
	ErrAuthentication = errors.New("environment registry authentication error")
	// ErrRequest: any other HTTP failure, timeout or transport error.
	ErrRequest = errors.New("environment registry request failed")
	// ErrProtocol: a 2xx response failed the checks of spec/registry-auth.md §3.2.
	ErrProtocol = errors.New("exec-server protocol error")
	// ErrConfig: the base URL or environment id is unusable.
	ErrConfig = errors.New("environment registry configuration error")
)

// Error is a register failure. Its text is the reference's (spec/registry-auth.md §7) and
// never contains a response body or credentials.
type Error struct {
	Kind   error // ErrAuthentication, ErrRequest, ErrProtocol or ErrConfig
	Status int   // HTTP status, 0 when none
	Detail string
	// Err is the underlying error when the Auth failed to produce credentials (for
	// errors.Is, e.g. ErrCredentialExpired); nil otherwise. Its text is already in Detail.
	Err error
}

func (e *Error) Error() string { return e.Kind.Error() + ": " + e.Detail }
func (e *Error) Is(target error) bool {
	return target == e.Kind
}
func (e *Error) Unwrap() error { return e.Err }

// credentialError marks a failure of Auth.Apply inside a request.
type credentialError struct{ err error }

func (e *credentialError) Error() string { return "preparing registry credentials: " + e.err.Error() }
func (e *credentialError) Unwrap() error { return e.err }

// authBuildError is the reference's text for a credential provider that could not produce
// request credentials (observed from codex 0.169.0 with an expired executor credential:
// "environment registry authentication error: failed to resolve environment registry
// authentication: request auth build error: exec-server executor credential is expired").
func authBuildError(err error) *Error {
	return &Error{Kind: ErrAuthentication, Err: err,
		Detail: "failed to resolve environment registry authentication: request auth build error: " + err.Error()}
}

func statusLine(code int) string {
	return fmt.Sprintf("%d %s", code, http.StatusText(code))
}

func registerHTTPError(status int) *Error {
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		return &Error{Kind: ErrAuthentication, Status: status,
			Detail: "environment registry authentication failed (" + statusLine(status) + "): response body omitted"}
	}
	return &Error{Kind: ErrRequest, Status: status,
		Detail: "environment registry request failed (" + statusLine(status) + "): environment registry executor registration failed"}
}

func protocolError(detail string) *Error {
	return &Error{Kind: ErrProtocol, Detail: detail}
}

// Protocol error details (spec/registry-auth.md §3.2).
const (
	detailInvalidResponse = "invalid environment registry executor registration response"
	detailDifferentEnvID  = "environment registry returned a different environment id"
	detailInvalidRegID    = "environment registry returned an invalid executor registration id"
)

// Validate outcomes (spec/registry-auth.md §4.2).
var (
	// ErrHarnessKeyRejected: 2xx without {"valid":true} (noise_reason validation_protocol).
	ErrHarnessKeyRejected = errors.New("environment registry rejected Noise relay harness key")
	// ErrValidateUnauthorized is wrapped by the *ValidateError of a 401: the executor's own
	// registry credentials were rejected, which the harness learns from message 2.
	ErrValidateUnauthorized = errors.New("environment registry rejected the executor credentials")
	// ErrValidateTimeout: no answer within RequestTimeout (noise_reason validation_timeout).
	ErrValidateTimeout = errors.New("timed out validating Noise relay harness key")
)

// ValidateError is a non-2xx or transport failure of validate. Its text never includes the
// response body.
type ValidateError struct {
	Status int // 0 for transport errors
}

func (e *ValidateError) Error() string {
	if e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden {
		return "environment registry harness key validation authentication failed (" + statusLine(e.Status) + ")"
	}
	return "environment registry harness key validation failed"
}

// Unwrap makes a 401 match ErrValidateUnauthorized.
func (e *ValidateError) Unwrap() error {
	if e.Status == http.StatusUnauthorized {
		return ErrValidateUnauthorized
	}
	return nil
}

// Reason maps a Validate error to the reference's noise_reason (spec/relay-noise.md §6):
// validation_protocol, registry_http, validation_timeout; "" for nil.
func Reason(err error) string {
	var ve *ValidateError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrHarnessKeyRejected):
		return "validation_protocol"
	case errors.Is(err, ErrValidateTimeout):
		return "validation_timeout"
	case errors.As(err, &ve):
		return "registry_http"
	}
	return "authorization_failed"
}

// RegistryStatus returns the HTTP status carried by a Validate or Register error, or 0.
func RegistryStatus(err error) int {
	var ve *ValidateError
	if errors.As(err, &ve) {
		return ve.Status
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}
