// Package netproxy is the executor-local network proxy of process/start's networkProxy
// member (spec/network-proxy.md): its wire decoding, its validation in the reference's
// order, and the compiled domain policy.
//
// # Layers
//
// Above: executor/process, which calls Decode and LaunchConfig.Check on every
// process/start (spec/network-proxy.md §2.2) and owns the process the proxy serves.
// Below: jsonwire (serde-compatible decoding and the reference's error texts) and the
// standard library. It knows no JSON-RPC connection, no session and no sandbox.
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
//     "none" domains and denied unix sockets are not validated.
//   - Step 2 of §2.2 (managedNetwork.transparentTcp) is the caller's, through
//     LaunchConfig.TransparentTCP.
//
// # Not implemented (the executor advertises networkProxyLaunch: false)
//
// The listeners, the child environment, policy enforcement, network/policyRequest
// callbacks, network/policyDecision audit, the sandbox bridge, transparent TCP and
// credential masking. Until they are, executor/process refuses every valid networkProxy
// with -32602 "network proxy launch is unsupported on this executor" (fail closed);
// invalid ones get the reference's own errors, in its order.
//
// # Known differences
//
//   - The reference decodes all of process/start's params in document order, so a
//     managedNetwork type error that comes after a networkProxy type error in the text
//     wins there; here managedNetwork is always decoded first.
//   - An integer beyond u64/i64 anywhere inside proxy fails there with "invalid type:
//     integer `N` as u128, expected any value" (§2.1 quirk); here only where a typed
//     member holds it ("invalid number"), and unknown members are skipped.
//   - credentialProviders is not type-checked (credential masking is not implemented).
//
// # Concurrency
//
// Decoded configs and compiled policies are immutable and safe for concurrent use. The
// package starts no goroutines.
package netproxy
