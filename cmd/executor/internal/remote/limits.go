package remote

import "github.com/execlab/executor/relay/mux"

// Implementation constants (our choice).
const (
	// requestIDHexLen is the number of random hex digits after "req_" in the x-request-id of
	// each upgrade attempt (spec/registry-auth.md §8.2: req_<32 lowercase hex>).
	requestIDHexLen = 32

	// DefaultMaxStreams is the default bound on active streams, the reference's 128
	// (spec/relay-noise.md §9). Raise it only with --max-streams.
	DefaultMaxStreams = mux.MaxStreams
)
