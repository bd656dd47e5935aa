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
//
// # Errors
//
// Every failure is {"error":{"code","message"}} (registry/api): 400 invalid_request, 401
// unauthorized (no or unknown token), 403 forbidden (token not scoped to the role or
// environment), 404, 405, 409 environment_offline / registration_fenced, 429 rate_limited
// (more than MaxLiveAuthorizations outstanding bundles), 503 registration_conflict (a
// concurrent write won; executors retry it), 500 internal_error. Messages never echo the
// request.
//
// # Concurrency
//
// Server is safe for concurrent use and starts no goroutines; expired authorizations are
// pruned inline by connect at most once per PruneInterval. Single use is enforced by the
// store (one conditional UPDATE), so it holds across processes sharing a PostgreSQL database.
//
// # Logging
//
// Never tokens, authorizations, keys or rendezvous URLs (their query is a credential).
package server
