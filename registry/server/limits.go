package server

import "time"

// Implementation constants (our choice; the reference registry is a closed service).
const (
	// AuthorizationTTL is how long a harness key authorization from connect stays valid,
	// unused: long enough for dial + handshake + the executor's validate (10 s timeout),
	// short enough that a leaked bundle is soon useless.
	AuthorizationTTL = 60 * time.Second

	// MaxLiveAuthorizations bounds the unused, unexpired authorizations per environment;
	// connect answers 429 rate_limited beyond it, so a harness looping on connect cannot
	// grow the store without bound.
	MaxLiveAuthorizations = 1024

	// PruneInterval is the least time between two deletions of expired authorizations,
	// done inline by connect (no background goroutine).
	PruneInterval = time.Minute

	// authorizationPrefix starts every issued authorization (ASCII, well under the 4096-byte
	// limit of spec/relay-noise.md §6).
	authorizationPrefix = "hka_"

	// registrationPrefix starts every registration id.
	registrationPrefix = "reg_"
)
