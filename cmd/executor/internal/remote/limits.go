package remote

import (
	"time"

	"github.com/execlab/executor/relay/mux"
)

// Implementation constants (our choice).
const (
	// requestIDHexLen is the number of random hex digits after "req_" in the x-request-id of
	// each upgrade attempt (spec/registry-auth.md §8.2: req_<32 lowercase hex>).
	requestIDHexLen = 32

	// DefaultMaxStreams is the default bound on active streams, the reference's 128
	// (spec/relay-noise.md §9). Raise it only with --max-streams.
	DefaultMaxStreams = mux.MaxStreams

	// RedialBackoffMax caps the rendezvous redial back-off (the reference's is 30 s,
	// spec/relay-noise.md §11): with 30 s an executor could stay offline up to 30 s after
	// a registry or rendezvous restart; 2 s brings it back within 3 s of the restart
	// (issue 14; docs/reliability.md §5) at one dial per 1–2 s per executor during an
	// outage.
	RedialBackoffMax = 2 * time.Second

	// registeredJitter bounds the random wait before the first dial after a successful
	// (re-)registration: the back-off is reset and the rendezvous dialled at once, spread
	// over this much so that executors re-registering together do not dial together.
	registeredJitter = 250 * time.Millisecond
)
