package server

import (
	"net/http"

	"github.com/execlab/executor/registry/api"
)

// Observer receives the registry's outcomes that HTTP statuses do not show, for metrics
// (cmd/executor wires Prometheus to it; registry packages never import a metrics
// library). Implementations must be safe for concurrent use and cheap.
type Observer interface {
	// Validated is called once per validate request with its outcome, one of the
	// Validate* constants: no environment id, key or authorization is ever passed.
	Validated(outcome string)
}

// Validate outcomes.
const (
	ValidateValid      = "valid"       // 200 {valid:true}: the authorization was consumed
	ValidateInvalid    = "invalid"     // 200 {valid:false}: unknown, expired, replayed or mismatched
	ValidateFenced     = "fenced"      // 409: the caller's registration is no longer current
	ValidateBadRequest = "bad_request" // 400: undecodable body or key
	ValidateError      = "error"       // anything else (the store failed)
)

// validateOutcome classifies validate's result.
func validateOutcome(res any, err error) string {
	switch api.StatusCode(err) {
	case 0:
	case http.StatusConflict:
		return ValidateFenced
	case http.StatusBadRequest:
		return ValidateBadRequest
	default:
		return ValidateError
	}
	if err != nil {
		return ValidateError
	}
	if v, ok := res.(api.ValidateResponse); ok && v.Valid {
		return ValidateValid
	}
	return ValidateInvalid
}

// nopObserver is the Observer of a nil Options.Observer.
type nopObserver struct{}

func (nopObserver) Validated(string) {}
