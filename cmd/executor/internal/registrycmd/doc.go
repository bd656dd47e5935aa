// Package registrycmd composes the self-hosted registry service of `executor registry
// serve` (and of `executor dev`, which embeds it): store, tokens, URL signer, rendezvous
// hub and registry HTTP server, all on one HTTP(S) listener.
//
// # Layers
//
// Above: package main (flags, the token file, signals) for `registry serve` and `dev`.
// Below: registry/server (HTTP API, Store in SQLite or PostgreSQL, Tokens, HTTPServer with
// its timeouts and connection cap), registry/rendezvous (the Hub that routes relay frames
// between executor and harness sockets, and the Signer of its URLs) and relay/wsconn (the
// rendezvous sockets' tuning). It holds no protocol logic of its own: every wire rule
// lives in those packages; this one only wires them together and picks defaults.
//
// # Contract
//
//   - Start opens the store, binds Config.Listen (port 0 picks one), and serves; the base
//     URL clients use is Config.PublicURL or http(s)://<bound address>. TLS needs both a
//     certificate and a key file, or neither.
//   - Start-up warnings are logged, never fatal: a non-loopback listener without TLS
//     (bearer tokens and rendezvous URLs would cross the network in clear), a token file
//     readable by group or others (CheckTokenFile), an existing SQLite database (or its
//     -wal/-shm) accessible to group or others (CheckStoreFile: it holds the URL signing
//     keys; a new one is created 0600), tokens that grant every role or every
//     environment. Token values are never logged; a warning names a token by its line and
//     id.
//   - Errors are wrapped with gerund context ("loading TLS certificate: …", "listening on
//     …: …"); on failure Start releases whatever it had opened.
//
// # Scale-out
//
// Every service is a registry node (server.Node, docs/operations.md): its URL signing keys
// live in the store (shared by every node on one PostgreSQL database, and kept across
// restarts with SQLite too), it holds a lease on Config.NodeID (default: the host name)
// and records which executor sockets it holds, so connect on any node hands out the
// holding node's Config.AdvertiseURL (default: the public URL).
//
// # Limits
//
// The listener's connection cap defaults to registry/server.MaxConns lowered so that the
// connections plus server.ReservedFDs fit the process's soft RLIMIT_NOFILE, but never
// below minConns (16: an executor, a few harnesses and registry calls); Config.HTTP
// overrides it. The rendezvous's harness-socket bounds are the hub's defaults unless
// Config.MaxHarnessSockets(PerSubject) raise them for benchmarks.
//
// # Concurrency and ownership
//
// Start starts two goroutines, the HTTP server's Serve loop and the node's heartbeat
// (Node.Run), and the Service owns them: Service.Close stops the heartbeat, releases the
// node's lease and locations, closes the listener and idle connections, closes every
// rendezvous socket (hijacked sockets belong to the hub), waits for the Serve goroutine and
// then closes the store. Run is Start, ready(url), wait for ctx, Close. Config is never mutated.
package registrycmd
