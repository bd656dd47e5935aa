// Package noise implements the hybrid Noise handshake and transport cipher used by the
// executor's relay channel: Noise_hybridIK_25519+MLKEM768_AESGCM_SHA256
// (spec/relay-noise.md §5, §7).
//
// # Layers
//
// Above: noise/channel runs the two handshake messages over a relay stream and frames
// JSON-RPC messages into transport records. Below: nothing; this package does no I/O.
// It knows nothing of relay frames, stream ids, JSON-RPC or the registry.
//
// # What it owns
//
//   - Identity / PublicKey: a static identity is an independent X25519 key pair plus an
//     ML-KEM-768 key pair. PublicKey has the strict registry JSON form
//     (spec/registry-auth.md §9) and never prints its key bytes. An Identity caches,
//     for up to 16 peers, the peer's parsed static key and ss = DH(s, rs), which depend
//     on the two static keys only (peercache.go): a repeated peer skips one X25519 and
//     one ML-KEM key parse; the wire bytes and keys are unchanged.
//   - AppendPrologue: the byte-exact prologue (four parts, each with an 8-byte
//     big-endian length prefix; spec §5.4).
//   - HandshakeState: the pure hybrid IK state machine. Message 1 (initiator to
//     responder) is `skem, e, es, s, ss` + payload, 3568+n bytes; message 2 is
//     `ekem, skem, e, ee, se` + payload, 3424+p bytes. Split yields k1
//     (initiator→responder) and k2 (responder→initiator).
//   - CipherState: AES-256-GCM with implicit nonce (4 zero bytes ‖ 64-bit big-endian
//     counter), no rekey.
//
// # Primitives
//
// X25519 and ML-KEM-768 come from github.com/cloudflare/circl (dh/x25519,
// kem/mlkem/mlkem768), except the one fixed-base X25519 operation (public-key
// generation), which comes from github.com/oasisprotocol/curve25519-voi (Edwards25519
// with a precomputed basepoint table, ≈ 19 µs against circl's ≈ 36 here), and DH(e, rs)
// with a peer that came back (the initiator's es, the responder's se), which uses the
// same kind of table made for that peer's key (dhTable, peercache.go; ≈ 18 µs against
// ≈ 50); all behind one seam, primitives.go; nothing else in the module imports either
// (test/deps_test.go). Why: they are the responder handshake's cost (issue
// 16), and on this project's AMD EPYC circl's amd64 code (BMI2/ADX field arithmetic,
// AVX2 NTT and SHAKE) runs them two to four times as fast as Go 1.26's standard
// library, measured on a quiet machine: X25519 ≈ 50 µs against 84, public-key generation
// ≈ 36 against 82, ML-KEM-768 key parse + encapsulation ≈ 50 against 129, decapsulation
// ≈ 28 against 108 (docs/bench.md, "handshakes_responder: circl primitives";
// BenchmarkFloor_* and BenchmarkStdlib_* measure both). The results are the same bytes: RFC 7748 vectors, cross tests against
// crypto/ecdh and crypto/mlkem (primitives_test.go), and known-answer transcripts made
// with the standard-library implementation (kat_test.go). Low-order X25519 points are
// rejected exactly where crypto/ecdh rejects them (all-zero output), and encapsulation
// keys get the FIPS 203 modulus check. circl's AVX2 code leaves the upper vector
// registers dirty, which slows the SSE code after it (SHA-NI, AES-NI) on this CPU; every
// ML-KEM call is followed by VZEROUPPER (avx_amd64.go).
//
// Standard library: crypto/hkdf + crypto/sha256 (Noise HKDF: HKDF-Extract with ck as
// salt, then HKDF-Expand with empty info, which equals the Noise HMAC chain),
// crypto/aes + crypto/cipher (GCM). github.com/flynn/noise was not used: it has no KEM
// tokens and its symmetric state cannot be driven token by token from outside.
//
// # Randomness
//
// Config.Rand (nil means crypto/rand) supplies all of a handshake's randomness: 32
// bytes become an X25519 private key, 64 bytes an ML-KEM-768 seed (d ‖ z), and 32 bytes
// the randomness m of each ML-KEM encapsulation, so a deterministic Config.Rand makes
// the whole transcript deterministic (kat_test.go). GenerateIdentity takes its own
// reader the same way.
//
// # Failure and key hygiene
//
// Any error from HandshakeState or CipherState poisons it for good: every later call
// returns an error wrapping ErrPoisoned together with the first failure. Error texts
// never contain key, payload or ciphertext bytes. Clear (and Split, for the handshake)
// zeroes the key material this package holds: the transcript, the X25519 ephemeral
// scalar (a plain array), the last KEM shared secret, the cached ss copy, and the
// initiator's ephemeral ML-KEM key as a value (its z and H(ek)). Not reachable from
// here, so dropped rather than zeroed: the expanded ML-KEM secret vector behind circl's
// pointer, and the key schedules inside crypto/aes.
//
// # Limits (limits.go)
//
// Every Noise message, handshake or transport, is at most MaxMessageLen (65535) bytes;
// message 1 carries at most MaxMessage1Payload (61967) payload bytes and message 2
// MaxMessage2Payload (62111); a CipherState is exhausted before its counter reaches
// MaxNonce. Record sizes, message framing and the reorder window are noise/channel's.
//
// # Invariants
//
//   - Message 1 is exactly Message1Overhead+n bytes, message 2 Message2Overhead+p; both
//     ≤ MaxMessageLen, checked before any work on read.
//   - The hashed protocol name is ProtocolName ("25519"); the JSON suite is SuiteLabel
//     ("X25519"). They are never interchanged.
//   - No AEAD key is used with a repeated nonce; MaxNonce is never used.
//   - A state that failed once never succeeds again.
//   - Nothing in this package logs, and no error text contains secret or peer bytes.
//
// Verified against the released reference (test/interop): message 2 read in the order
// ekem, skem, e, ee, se authenticates, and transport records interoperate both ways.
//
// # Concurrency
//
// HandshakeState and CipherState are not safe for concurrent use; callers serialise
// access (noise/channel keeps one CipherState per direction under its own lock).
// Identity and PublicKey are safe to share: their keys are immutable, and an Identity's
// peer cache has its own mutex, held for map operations only. Config is never mutated.
package noise
