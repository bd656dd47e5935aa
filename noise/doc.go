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
// Standard library only: crypto/ecdh (X25519), crypto/mlkem (ML-KEM-768),
// crypto/hkdf + crypto/sha256 (Noise HKDF: HKDF-Extract with ck as salt, then
// HKDF-Expand with empty info, which equals the Noise HMAC chain), crypto/aes +
// crypto/cipher (GCM). github.com/flynn/noise was not used: it has no KEM tokens and its
// symmetric state cannot be driven token by token from outside.
//
// # Randomness
//
// Config.Rand (nil means crypto/rand) supplies the ephemeral keys: 32 bytes become the
// X25519 private key and 64 bytes the ML-KEM-768 seed (d ‖ z). ML-KEM encapsulation
// draws from crypto/mlkem's own source, which Config.Rand cannot reach; tests that need
// fully deterministic transcripts use testing/cryptotest.SetGlobalRandom, which covers
// both. Production code never imports crypto/mlkem/mlkemtest.
//
// # Failure and key hygiene
//
// Any error from HandshakeState or CipherState poisons it for good: every later call
// returns an error wrapping ErrPoisoned together with the first failure. Error texts
// never contain key, payload or ciphertext bytes. Clear (and Split, for the handshake)
// zeroes the key material this package holds; key schedules inside crypto/aes and the
// private keys inside crypto/ecdh and crypto/mlkem values cannot be zeroed from outside,
// so Clear drops the references to them instead.
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
