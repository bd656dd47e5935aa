// Package netproxy is the executor-local network proxy of process/start's networkProxy
// member (spec/network-proxy.md): its wire decoding and validation in the reference's
// order, the compiled domain policy, and the per-process proxy itself (an HTTP listener
// and an optional SOCKS5 listener on 127.0.0.1) with the child's proxy environment.
//
// # Layers
//
// Above: executor/process, which calls Decode and LaunchConfig.Check on every
// process/start (§2.2), starts one Proxy per process before the spawn, writes Env into
// the child's environment, turns AuditRecords into network/policyDecision notifications,
// carries Decider questions to the client as network/policyRequest, and closes the Proxy
// when the process closes or is killed (§3). Below: jsonwire
// (serde-compatible decoding and the reference's error texts) and the standard library.
// It knows no JSON-RPC connection, no session and no sandbox.
//
// # Contract
//
//   - Decode: absent or null → no proxy. Otherwise serde's semantics and texts, bare,
//     as -32602 (§2, §2.1): "missing field `proxy`", "invalid type: string \"x\",
//     expected struct RemoteNetworkProxyLaunchConfig", "unknown variant `Full`, expected
//     `limited` or `full`", …; unknown members ignored at every level. proxy has no
//     sequence form (the reference buffers it); the launch config and auditMetadata do.
//   - Check: §2.2 steps 3–6 (timeout zero, callback processId, transparentTcp without a
//     sandbox, the proxy config build with its "invalid network proxy config: " texts).
//     The order inside the build was probed on codex 0.171.0: enabled, transparentTcp
//     without SOCKS5, allowed unix sockets (sorted, index within the allowed ones),
//     denied domains (sorted), allowed domains (sorted), reviewDomains (as given).
//     "none" domains and denied unix sockets are not validated. Step 2 of §2.2
//     (managedNetwork.transparentTcp) is the caller's, through TransparentTCP.
//   - Policy.Decide: §5.2 in order — deny list, review domains, local/private
//     destinations (not_allowed_local unless allowLocalBinding or the exact literal is
//     allowlisted), allowlist, limited-mode guard (GET/HEAD/OPTIONS; CONNECT →
//     mitm_required; SOCKS5 refused before any domain rule). Pure.
//   - Proxy: the listeners (§3), replies to the child (§5.3: 403 JSON with
//     x-proxy-error, 400 missing host / Host mismatch / empty, 502 upstream failure,
//     CONNECT "200 OK" with only a date header; SOCKS5 reply 2 for every block), and
//     the resolution check of §5.2 step 7 (an allowed name whose every address is local
//     is refused unless local binding is allowed or the name is an allowlisted local
//     host). Every final decision goes to Options.Audit.
//   - Env: the 34 variables of §4, overwriting the client's.
//
// # SOCKS5: our own, deliberately
//
// socks5.go is ~150 lines of RFC 1928 (no authentication, CONNECT only). No maintained Go
// SOCKS5 server library is among the module's allowed dependencies (STYLE.md §18) nor in
// the package lists this project draws from, and the ones that exist own the accept
// loop and the dial, where the policy decision, the audit record and the resolution check
// must sit between parsing the request and writing the reply. UDP ASSOCIATE and BIND
// are answered "command not supported" (7).
//
// # HTTP forwarding
//
// Written by hand (http.go), not with httputil.ReverseProxy, which adds and rewrites
// headers: the request head is re-emitted in origin form with its header lines' bytes and
// order, hop-by-hop headers dropped; the body is bounded by its framing; the response is
// relayed as raw bytes. One request per client connection, and the upstream is asked to
// close ("Connection: close"), so that a second request on a kept-alive connection can
// never reach an upstream without its own policy decision.
//
// # Decision callbacks (decider.go)
//
// With policyDecisionTimeoutMs (T), a request Decide refuses as not_allowed (an
// allowlist miss or a review domain; never a deny-list hit nor a local destination) is
// put to Options.Decider, which executor/process turns into network/policyRequest on
// the session's current connection. allow → allowed, source decider, reason
// not_allowed, policyOverride, then the limited-mode guard; deny/ask → blocked with the
// client's reason (x-proxy-error blocked-by-policy, decision "deny"/"ask"). Everything
// else — a transport or JSON-RPC error, a malformed or empty result, a reason over 1024
// bytes or with control characters, no answer within T + 5 s, Close — is deny
// not_allowed from the decider (blocked-by-allowlist). Probed on codex 0.171.0 and
// 0.169.0: test/conformance netproxy_policy_callbacks.
//
// # Sandbox bridge and transparent TCP
//
// Not here: with a sandbox and enforceManagedNetwork, executor/process derives the
// sandbox's managedNetwork from this proxy's listener ports and the existing
// managed-network bridge (sandbox/managed*.go) carries the child's proxy variables into
// the namespace; without bubblewrap the launch is refused (test/conformance
// netproxy_sandbox_bridge). With transparentTcp (§8.3) the sandbox also captures the
// command's direct TCP and name lookups (sandbox/transparent) and sends each captured
// connection to this proxy's SOCKS5 listener, so it is decided and audited here as
// socks5_tcp (netproxy_transparent_tcp_capture) and, being SOCKS5 TCP, chained
// through a --tcp-upstream-proxy like any other.
//
// # Not implemented
//
// SOCKS5 UDP, and chaining to the user's own upstream proxy variables
// (allowUpstreamProxy without a --tcp-upstream-proxy; upstream.go handles the
// executor's mandatory TCP upstream). executor/process refuses credentialMasking when
// the executor has no CODEX_HOME for its CA with -32602
// "network proxy launch is unsupported on this executor" (fail closed).
//
// # Credential masking (intercept.go)
//
// proxy.credentialProviders decodes as credmask.Providers (the reference's texts).
// executor/process masks the child's environment with credmask.Prepare after writing
// Env and hands the broker to SetBroker; with one, a plain-HTTP request to a
// credential's http destination, and the one request of a CONNECT tunnel to one of its
// https destinations (TLS-terminated with Options.CA's leaf for the CONNECT host, then
// HTTP/1.1 over TLS to that host verified against Options.UpstreamRoots or the system
// roots), has its credential header's dummy swapped back (Broker.RewriteLines) before
// it is forwarded. Every other tunnel stays opaque, so other hosts get the dummy.
// Limited mode still refuses CONNECT (mitm_required) before any interception. Probed
// for plain HTTP on 0.171.0 and 0.169.0 (test/conformance credmask_end_to_end); HTTPS
// by executor/process's end-to-end test only.
//
// # Known differences from the reference
//
//   - Forwarded responses are relayed byte for byte: the reference re-serialises them
//     (adding a date header when absent) and keeps the upstream connection alive; ours
//     sends the upstream "Connection: close" and closes the client connection after
//     each response.
//   - The reference decodes all of process/start's params in document order, so a
//     managedNetwork type error that comes after a networkProxy type error in the text
//     wins there; here managedNetwork is always decoded first.
//   - An integer beyond u64/i64 anywhere inside proxy fails there with "invalid type:
//     integer `N` as u128, expected any value" (§2.1 quirk); here only where a typed
//     member holds it ("invalid number"), and unknown members are skipped.
//   - An intercepted tunnel carries one request (then closes), like a forwarded plain
//     request; the reference keeps intercepted connections alive.
//   - A request line cut by a literal backslash escape is answered when its line ends;
//     the reference (an incremental parser) may answer earlier.
//   - enforceManagedNetwork without a sandbox: the reference spawns directly
//     (sandboxType none, no enforcement, §8.1); ours runs the command in the
//     managed-network sandbox (the stricter direction of spec/sandbox.md §2.9).
//
// # Concurrency
//
// Decoded configs and compiled policies are immutable and safe for concurrent use. A
// Proxy owns its goroutines: one accept routine per listener, one routine per client
// connection, one copy routine per established tunnel or forward, and one re-chunking
// routine per chunked request body; Close closes the listeners and every tracked
// connection and returns after all of them have ended. Proxy.mu guards only the
// connection table (no other lock is taken under it). Options.Audit is called on
// connection routines and must not block. Options.Decider is called on connection
// routines too and may block until its ctx ends (T + 5 s, or Close, which cancels it
// before waiting for the routines).
package netproxy
