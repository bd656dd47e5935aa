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

// NodeObserver receives a registry node's location and lease events, for metrics
// (NodeOptions.Observer). Every value passed is one of the constants below: no
// environment, node or socket id. Implementations must be safe for concurrent use and
// cheap.
type NodeObserver interface {
	// LocationChanged is called once per change of an executor location this node is
	// party to, with one of the Location* reasons.
	LocationChanged(reason string)
	// LeaseRenewal is called once per heartbeat's lease renewal, with one of the Lease*
	// outcomes.
	LeaseRenewal(outcome string)
}

// Location change reasons passed to NodeObserver.LocationChanged.
const (
	// LocationAttached: an executor socket was accepted here and its location recorded.
	LocationAttached = "attached"
	// LocationAttachFailed: recording the location failed (store unreachable); the
	// upgrade was refused and the executor redials.
	LocationAttachFailed = "attach_failed"
	// LocationDetached: an executor socket held here ended and its location was cleared
	// (if it still named that socket; not counted during a clean shutdown, whose bulk
	// release clears them all).
	LocationDetached = "detached"
	// LocationMovedAway: the relocation check closed a socket held here whose location
	// another node has taken (the executor reattached there, or a newer registration
	// did): cross-node fencing.
	LocationMovedAway = "moved_away"
	// LocationStaleRefused: a connect found a location that no longer stands (an older
	// registration's, or one this node's Hub no longer holds) and answered 409.
	LocationStaleRefused = "stale_refused"
)

// Lease renewal outcomes passed to NodeObserver.LeaseRenewal.
const (
	LeaseRenewed    = "ok"    // the lease was extended
	LeaseRenewError = "error" // the store could not be reached or failed
	LeaseLost       = "lost"  // another process claimed this node id
)

// nopNodeObserver is the NodeObserver of a nil NodeOptions.Observer.
type nopNodeObserver struct{}

func (nopNodeObserver) LocationChanged(string) {}
func (nopNodeObserver) LeaseRenewal(string)    {}
