package server

import (
	"context"
	"errors"
	"time"

	"github.com/execlab/executor/registry/rendezvous"
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
	// ExitedAt is when this registration's executor reported its exit (an exit notice,
	// MarkExited); zero while it has not. A new registration starts at zero.
	ExitedAt time.Time
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
	// atomically, and returns it. exitTokenHash is the SHA-256 of the registration's exit
	// notice token (MarkExited).
	Register(ctx context.Context, environmentID, registrationID string, executorKey []byte, exitTokenHash [32]byte, now time.Time) (Registration, error)
	// MarkExited records that the executor of the environment's registration
	// registrationID exited, if that registration is still the current one, its exit
	// token hashes to exitTokenHash and no exit was recorded yet; it reports whether it
	// did (the token is good once).
	MarkExited(ctx context.Context, environmentID, registrationID string, exitTokenHash [32]byte, now time.Time) (bool, error)
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

	// The scale-out state (sqlstore_cluster.go): URL signing keys shared by every node, node
	// leases, and which node holds each environment's executor socket.

	// EnsureSigningKey stores key under id unless a key with that id exists, and returns
	// the stored one: concurrent nodes agree on one key per id.
	EnsureSigningKey(ctx context.Context, id int64, key []byte, now time.Time) ([]byte, error)
	// SigningKeys returns the keys with ids at least minID.
	SigningKeys(ctx context.Context, minID int64) ([]rendezvous.SigningKey, error)
	// PruneSigningKeys deletes the keys with ids below minID.
	PruneSigningKeys(ctx context.Context, minID int64) error
	// ClaimNode records n as the live process of its node id until n.LeaseUntil, replacing
	// any other process that claimed the id (a restart takes its identity over at once).
	ClaimNode(ctx context.Context, n NodeLease) error
	// RenewNode extends the lease of n's process; false when another process has claimed
	// the node id since (its locations are then never handed out).
	RenewNode(ctx context.Context, n NodeLease) (bool, error)
	// ReleaseNode deletes n's process's lease and the locations it recorded.
	ReleaseNode(ctx context.Context, n NodeLease) error
	// SetLocation records that l's node holds the environment's executor socket, unless a
	// location of a newer generation is recorded.
	SetLocation(ctx context.Context, l Location) error
	// ClearLocation deletes the environment's location if it names socketID.
	ClearLocation(ctx context.Context, environmentID, socketID string) error
	// Location returns the environment's location if the node that recorded it still holds
	// a lease at now, else ErrNotFound.
	Location(ctx context.Context, environmentID string, now time.Time) (Location, error)
	// LocationsOf returns the socket ids of the locations n's process recorded and that
	// still stand, by environment id.
	LocationsOf(ctx context.Context, n NodeLease) (map[string]string, error)
}

// NodeLease is one registry process's claim on a node id.
type NodeLease struct {
	NodeID string
	// Instance is random per process: a restarted node has a new one, which makes the
	// locations its previous process recorded stale.
	Instance string
	// AdvertiseURL is the http(s) base URL at which this node alone is reachable.
	AdvertiseURL string
	LeaseUntil   time.Time
}

// Location is where an environment's executor socket is attached.
type Location struct {
	EnvironmentID string
	NodeID        string
	Instance      string
	SocketID      string // the rendezvous's id of the socket
	Generation    int64
	// AdvertiseURL is the node's (filled by Location from the node's lease).
	AdvertiseURL string
}
