// Package server is the self-hosted environment registry (spec/registry-auth.md §1–§9): the
// HTTP API the released executor and harness speak (register, validate, connect), backed by
// a Store (SQLite by default, PostgreSQL by DSN, one schema and one migration list), bearer
// tokens scoped by role and environment, and the rendezvous upgrades served on the same
// handler by registry/rendezvous.
//
// # Flow
//
//	executor  POST …/register  -> new generation G (fences G-1), signed executor URL (gen G)
//	executor  GET  rendezvous (environment URL)            -> Hub: executor socket of G
//	harness   POST …/connect   -> needs an executor socket of G online (else 409
//	                              environment_offline); issues a single-use authorization
//	                              bound to (environment, registration, harness key), valid
//	                              AuthorizationTTL, plus a signed harness URL (gen G)
//	harness   GET  rendezvous (harness URL)                -> Hub: harness socket
//	executor  POST …/validate  -> consumes the authorization once: {valid:true}; replays,
//	                              expired, other key or registration: {valid:false};
//	                              a registration that is no longer current: 409
//	                              registration_fenced
//	guard     POST …/executor-exited (our extension, no bearer; executor_exited.go)
//	                           -> the register response's one-shot exit_notice_token marks
//	                              the current registration's executor exited; connect then
//	                              answers 409 environment_offline + executor_exited until
//	                              the next register
//
// # Scale-out (issue 17; docs/operations.md)
//
// Any number of processes may serve one PostgreSQL store; each is a Node (node.go) with a
// node id and an advertised URL (its own address), and the Server's PublicURL is the
// address that balances over all of them:
//
//   - URL signing keys live in the store (signing_keys), one per KeyRotation period, created
//     a period ahead and kept until MaxURLTTL after their period: every node verifies every
//     node's URLs, a restart keeps them, a rotation never invalidates a live URL.
//   - register hands the executor a URL on PublicURL, so after losing its node the executor
//     redials the same, still valid URL through any live node, with its usual jittered
//     back-off (no re-registration).
//   - The node that accepts an executor socket records (environment, node, process
//     instance, socket, generation) in executor_locations; connect on any node reads it
//     and hands the harness a URL on that node's advertised address, so frames never cross
//     two nodes. There is no inter-node forwarding.
//   - Stale locations are never handed out: a location counts only while its node's lease
//     (registry_nodes, renewed every HeartbeatInterval, valid LeaseTTL) names the same
//     process instance. A killed node's locations lapse within LeaseTTL, a restarted
//     node's at once; a clean shutdown deletes them.
//   - Cross-node fencing: every RelocationCheckInterval a node closes its executor sockets
//     whose location another node's attach has overwritten (Hub.CloseExecutor).
//
// SQLite is the single-node default and runs the same code with one node.
//
// # Errors
//
// Every failure is {"error":{"code","message"}} (registry/api): 400 invalid_request, 401
// unauthorized (no or unknown token), 403 forbidden (token not scoped to the role or
// environment), 404, 405, 409 environment_offline / registration_fenced, 429 rate_limited
// (MaxLiveAuthorizationsPerToken outstanding bundles of the calling token, or
// MaxLiveAuthorizations of the environment, or a token the rendezvous paused for failed
// streams), 503 registration_conflict (a concurrent write won; executors retry it), 500
// internal_error. Messages never echo the request.
//
// # Tokens
//
// A token file line names a token (or its SHA-256) and its scope: roles (executor:
// register, validate; harness: connect) and environments, "*" meaning all explicitly. A
// line without roles= or envs= means all; Tokens.Unscoped lists such tokens so start-up
// can warn. Each token has a public TokenID (a hash of its hash): connect stores it with
// the authorization (the per-token bound) and puts it in the harness URL as the
// rendezvous subject.
//
// # HTTP layer
//
// HTTPServer serves the handler with the bounds of limits.go: ReadHeaderTimeout,
// ReadTimeout (whole request: a trickled body is cut off), WriteTimeout, IdleTimeout,
// MaxHeaderBytes, bodies of at most api.MaxRequestBody read only after authentication,
// handler store calls bounded by api.RequestTimeout, optional TLS (HTTP/1.1 only), and a
// connection cap (MaxConns) that evicts connections idle before or between requests
// first, so idle sockets cannot starve real clients or exhaust file descriptors.
// Rendezvous upgrades lose the timeouts at the hijack.
//
// # Concurrency
//
// Server is safe for concurrent use and starts no goroutines (HTTPServer.Serve runs on its
// caller's goroutine, net/http's per connection; Node.Run is the one goroutine of a Node,
// owned by its caller); expired authorizations are
// pruned inline by connect at most once per PruneInterval. Single use is enforced by the
// store (one conditional UPDATE), so it holds across processes sharing a PostgreSQL database.
//
// # Logging
//
// Never tokens, authorizations, keys or rendezvous URLs (their query is a credential).
package server
