package server

import (
	"time"

	"github.com/execlab/executor/registry/api"
	"github.com/execlab/executor/registry/rendezvous"
)

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

	// MaxLiveAuthorizationsPerToken bounds the unused, unexpired authorizations one bearer
	// token holds in one environment (security issue 13: one token used to fill the whole
	// environment bound and lock every other harness out for AuthorizationTTL). A harness
	// process holds one at a time (consumed by validate within seconds) plus the few its
	// recovery loop leaves behind (spec/registry-auth.md §5.3), so 128 serves about a
	// hundred harnesses sharing a token that start at once, and eight tokens at their bound
	// still leave the environment bound unreached.
	MaxLiveAuthorizationsPerToken = MaxLiveAuthorizations / 8

	// PruneInterval is the least time between two deletions of expired authorizations,
	// done inline by connect (no background goroutine).
	PruneInterval = time.Minute

	// authorizationPrefix starts every issued authorization (ASCII, well under the 4096-byte
	// limit of spec/relay-noise.md §6).
	authorizationPrefix = "hka_"

	// registrationPrefix starts every registration id.
	registrationPrefix = "reg_"

	// exitTokenPrefix starts every exit notice token (api.RegisterResponse.ExitNoticeToken):
	// 4 + 43 bytes, under api.MaxExitNoticeTokenLen.
	exitTokenPrefix = "ext_"
)

// Scale-out constants (our choice; issue 17, docs/operations.md).
const (
	// KeyRotation is how long one URL signing key signs. Keys are kept, verifying, until
	// every URL they signed has expired (MaxURLTTL after their period ends), so a rotation
	// never invalidates a live URL.
	KeyRotation = 24 * time.Hour

	// MaxURLTTL is the longest lifetime of a signed rendezvous URL (the executor's).
	MaxURLTTL = rendezvous.ExecutorURLTTL

	// HeartbeatInterval is how often a node renews its lease (one UPDATE) and checks its key
	// ring.
	HeartbeatInterval = 2 * time.Second

	// LeaseTTL is how long a node's lease lasts unrenewed: a node killed without a clean
	// shutdown stops being handed out within LeaseTTL (usually sooner: its executors
	// reattach to another node within their redial back-off, which moves the location).
	// Three heartbeats, so one slow store round does not drop a live node.
	LeaseTTL = 3 * HeartbeatInterval

	// RelocationCheckInterval is how often a node looks for its executor sockets whose
	// location another node has taken (one read of its own locations), and closes them.
	RelocationCheckInterval = 10 * time.Second

	// LocationTimeout bounds recording or clearing one executor location.
	LocationTimeout = 5 * time.Second
)

// HTTP limits (our choice; security issue 13). The registry's clients send small requests
// at once and give up after api.RequestTimeout (spec/registry-auth.md §2.2), so each bound
// is a few times what a legitimate client needs and far below "forever".
const (
	// ReadHeaderTimeout bounds reading a request's headers, from the first byte (or, on a
	// fresh connection, from accept). Registry requests fit in one packet.
	ReadHeaderTimeout = 5 * time.Second

	// ReadTimeout bounds reading a whole request, body included: a client trickling a
	// body is cut off. A legitimate client has given up after api.RequestTimeout anyway,
	// and bodies are at most api.MaxRequestBody. Rendezvous upgrades have no body, and
	// the hijack clears the deadline.
	ReadTimeout = api.RequestTimeout

	// WriteTimeout bounds the handler's work plus writing the response, from the end of the
	// headers: the handler's store calls are bounded by api.RequestTimeout (its context),
	// plus 5 s to deliver a response of a few KB.
	WriteTimeout = api.RequestTimeout + 5*time.Second

	// IdleTimeout closes a keep-alive connection idle this long between requests. The
	// executor reuses one connection for register and validate (spec/registry-auth.md
	// §2.2); reconnecting after 30 s idle costs one handshake.
	IdleTimeout = 30 * time.Second

	// MaxHeaderBytes bounds a request's headers, in bytes: bearer tokens, ChatGPT JWTs and
	// Agent Identity assertions are a few KB; net/http's default is 1 MiB.
	MaxHeaderBytes = 64 << 10

	// MaxConns bounds the open connections of the registry listener, HTTP and rendezvous
	// websockets together. An idle rendezvous socket costs about 17 KB
	// (rendezvous.BenchmarkHub_IdleSocketMemory), so 16,384 cost under 300 MB; the
	// effective bound is further lowered to the file-descriptor limit minus ReservedFDs
	// (cmd/executor/internal/registrycmd), so the process never runs out of descriptors.
	MaxConns = 16384

	// ReservedFDs are the file descriptors kept out of MaxConns: stdio, the listener, the
	// store (SQLite file, WAL and shared memory, or MaxStoreConns PostgreSQL connections),
	// and, under `executor dev`, the executor's own sockets, pipes and files.
	ReservedFDs = 64

	// MaxStoreConns bounds the PostgreSQL connection pool (database/sql's default is
	// unbounded): every connect, register and validate holds one for a query or two.
	MaxStoreConns = 16
)
