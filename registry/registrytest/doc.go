// Package registrytest runs the self-hosted registry (registry/server) and its rendezvous
// (registry/rendezvous) in the test process on 127.0.0.1: one in-process control plane for
// every test that needs a registry, as tailscale's testcontrol is for tailnet tests.
//
// Start serves a fresh store (SQLite under the test's temp dir unless Options.Store gives
// one) through server.NewHTTPServer, the production HTTP layer, with one random harness and
// executor token written to a token file. A Registry can be killed (listener and every
// socket dropped) and restarted on the same port with the same store and URL signing key,
// as a restarted registry process would be.
//
// Layers: above registry/server, registry/rendezvous and registry/api; below test/e2e,
// test/interop and the registry packages' own tests. Import it only from _test.go files
// (test/deps_test.go checks). It starts no process; executors are started with
// internal/refbin's launcher.
//
// Concurrency: a Registry's methods are safe for concurrent use; Kill and Restart
// serialize with each other and with Hub.
package registrytest
