package direct

import "fmt"

// Kind is the category of an Error; its String is the reference's error prefix.
type Kind int

const (
	// ErrConfig: the flags or the registry's url cannot be used (bad scheme, http to a
	// non-loopback host, empty service, no region). Never retried.
	ErrConfig Kind = iota + 1
	// ErrAuth: credentials could not be loaded, or the registry answered 401 or 403.
	ErrAuth
	// ErrRequest: the request failed (network, timeout, another non-2xx status).
	ErrRequest
	// ErrProtocol: the registry's answer is malformed or names another environment or
	// transport.
	ErrProtocol
)

func (k Kind) String() string {
	switch k {
	case ErrConfig:
		return "environment registry configuration error"
	case ErrAuth:
		return "environment registry authentication error"
	case ErrRequest:
		return "environment registry request failed"
	case ErrProtocol:
		return "exec-server protocol error"
	}
	return "direct transport error"
}

// Error is a failed Register or Dial. Status is the HTTP status, 0 when none was received.
type Error struct {
	Kind   Kind
	Status int
	Detail string
	Err    error
}

func (e *Error) Error() string {
	s := e.Kind.String() + ": " + e.Detail
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

func errorf(k Kind, status int, err error, format string, args ...any) *Error {
	return &Error{Kind: k, Status: status, Detail: fmt.Sprintf(format, args...), Err: err}
}
