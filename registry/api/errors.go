package api

import (
	"errors"
	"fmt"
	"net/http"
)

// Error codes carried in ErrorResponse.Error.Code. The first three are the ones the
// reference's clients branch on (spec/registry-auth.md §5.3, §7, §8.1); the rest are this
// registry's own and only informative.
const (
	// CodeRegistrationConflict with 503: another registration of the environment is being
	// committed; the executor retries forever with backoff (spec §8.1).
	CodeRegistrationConflict = "registration_conflict"
	// CodeAuthServiceUnavailable with 502: the registry could not check credentials right
	// now; retried like CodeRegistrationConflict (spec §8.1).
	CodeAuthServiceUnavailable = "authentication_service_unavailable"
	// CodeEnvironmentOffline with 409: no executor is connected for the environment; a
	// harness retries (spec §5.3).
	CodeEnvironmentOffline = "environment_offline"

	CodeUnauthorized       = "unauthorized"        // 401: missing or unknown token
	CodeForbidden          = "forbidden"           // 403: token not scoped to this environment or role
	CodeInvalidRequest     = "invalid_request"     // 400: malformed body, bad key, bad environment id
	CodeNotFound           = "not_found"           // 404: unknown path
	CodeMethodNotAllowed   = "method_not_allowed"  // 405
	CodeRegistrationFenced = "registration_fenced" // 409: a newer registration replaced this one
	CodeRateLimited        = "rate_limited"        // 429
	CodeInternal           = "internal_error"      // 500
)

// ErrorResponse is the body of every non-2xx answer: {"error":{"code":…,"message":…}}.
type ErrorResponse struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is the inner object of ErrorResponse. Message is human-readable and never
// contains credentials or request bodies.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// ExecutorExited is this registry's extension on 409 environment_offline: the
	// environment's current registration reported that its executor exited (an exit
	// notice, docs/reliability.md §5), so a session on it cannot be resumed. Released
	// harnesses ignore the member and retry as for any offline environment.
	ExecutorExited bool `json:"executor_exited,omitempty"`
}

// Error is a registry failure as a Go error: the HTTP status and the error code. Clients
// build it from a response (never including the body text beyond the code, spec §7); the
// server uses it to choose what to send.
type Error struct {
	Status  int
	Code    string
	Message string
	// ExecutorExited is sent as ErrorBody.ExecutorExited.
	ExecutorExited bool
}

func (e *Error) Error() string {
	return fmt.Sprintf("registry: %d %s: %s", e.Status, http.StatusText(e.Status), e.Code)
}

// NewError returns an *Error.
func NewError(status int, code, message string) *Error {
	return &Error{Status: status, Code: code, Message: message}
}

// StatusCode returns the HTTP status of err if it is (or wraps) an *Error, else 0.
func StatusCode(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// RegisterRetryable reports whether a register failure is retried forever by the executor:
// 503 registration_conflict and 502 authentication_service_unavailable only
// (spec/registry-auth.md §7, §8.1).
func RegisterRetryable(status int, code string) bool {
	return status == http.StatusServiceUnavailable && code == CodeRegistrationConflict ||
		status == http.StatusBadGateway && code == CodeAuthServiceUnavailable
}

// ConnectRetryable reports whether a harness retries a failed connect: 5xx, 408, 429 and
// 409 environment_offline (spec/registry-auth.md §5.3). A malformed 2xx is not retryable.
func ConnectRetryable(status int, code string) bool {
	switch {
	case status >= 500 && status <= 599:
		return true
	case status == http.StatusRequestTimeout, status == http.StatusTooManyRequests:
		return true
	case status == http.StatusConflict && code == CodeEnvironmentOffline:
		return true
	}
	return false
}
