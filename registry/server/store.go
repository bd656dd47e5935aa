package server

import (
	"context"
	"errors"
	"time"
)

// Registration is an environment's current executor registration.
type Registration struct {
	EnvironmentID  string
	RegistrationID string
	// Generation counts registrations of the environment from 1; a newer one fences older
	// ones (their URLs and validations stop working).
	Generation        int64
	ExecutorPublicKey []byte // canonical public-key JSON (api.CanonicalPublicKey)
	CreatedAt         time.Time
}

// Authorization is one issued harness key authorization. The token itself is never stored,
// only its SHA-256.
type Authorization struct {
	TokenHash      [32]byte
	EnvironmentID  string
	RegistrationID string
	HarnessKeyHash [32]byte // SHA-256 of the canonical harness public-key JSON
	ExpiresAt      time.Time
	TokenID        string // TokenID of the bearer that called connect
}

// Store errors callers branch on.
var (
	// ErrNotFound: the environment has no registration.
	ErrNotFound = errors.New("registry: not found")
	// ErrConflict: a concurrent write won (SQLite busy, PostgreSQL serialization failure);
	// register answers 503 registration_conflict, which executors retry.
	ErrConflict = errors.New("registry: conflicting concurrent write")
)

// Store is the registry's persistent state. Implementations are safe for concurrent use.
// Every method honours ctx.
type Store interface {
	// Register records a new registration of the environment with the next generation,
	// atomically, and returns it.
	Register(ctx context.Context, environmentID, registrationID string, executorKey []byte, now time.Time) (Registration, error)
	// Registration returns the environment's current registration, or ErrNotFound.
	Registration(ctx context.Context, environmentID string) (Registration, error)
	// IssueAuthorization stores a harness authorization.
	IssueAuthorization(ctx context.Context, a Authorization) error
	// LiveAuthorizations counts the environment's unused, unexpired authorizations, and
	// among them those issued to tokenID.
	LiveAuthorizations(ctx context.Context, environmentID, tokenID string, now time.Time) (live, token int, err error)
	// ConsumeAuthorization marks the authorization used if it exists, is unused and
	// unexpired, and matches the environment, registration and harness key; it reports
	// whether it did. At most one call per token ever returns true.
	ConsumeAuthorization(ctx context.Context, tokenHash [32]byte, environmentID, registrationID string, harnessKeyHash [32]byte, now time.Time) (bool, error)
	// PruneAuthorizations deletes authorizations that expired before now.
	PruneAuthorizations(ctx context.Context, now time.Time) (int64, error)
	// Close releases the database.
	Close() error
}
