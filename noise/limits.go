package noise

// Wire constants: fixed by the reference; changing any of them breaks interop.
const (
	// ProtocolName is hashed into the transcript (spec/relay-noise.md §5.1). Note "25519",
	// not "X25519": the suite label below differs.
	ProtocolName = "Noise_hybridIK_25519+MLKEM768_AESGCM_SHA256"

	// SuiteLabel is the public-key JSON "suite" value (spec/registry-auth.md §9).
	SuiteLabel = "Noise_hybridIK_X25519+MLKEM768_AESGCM_SHA256"

	// PrologueDomain is the first prologue part (spec/relay-noise.md §5.4), 32 bytes.
	PrologueDomain = "codex-exec-server-relay-noise/v1"

	// PrologueLenPrefix is the size of each prologue part's big-endian length, in bytes
	// (spec §5.4; earlier reference revisions used 4, which the released binary rejects).
	PrologueLenPrefix = 8

	// DHLen is an X25519 public key or shared secret, in bytes (spec §5.2).
	DHLen = 32
	// KEMPublicKeyLen is an ML-KEM-768 encapsulation key, in bytes (FIPS 203; spec §5.2).
	KEMPublicKeyLen = 1184
	// KEMCiphertextLen is an ML-KEM-768 ciphertext, in bytes (FIPS 203; spec §5.2).
	KEMCiphertextLen = 1088
	// KEMSeedLen is an ML-KEM-768 decapsulation key seed d ‖ z, in bytes (FIPS 203).
	KEMSeedLen = 64
	// kemSharedLen is an ML-KEM-768 shared secret, in bytes (FIPS 203).
	kemSharedLen = 32
	// kemEncapsulationSeedLen is the randomness m one ML-KEM encapsulation draws, in
	// bytes (FIPS 203 §7.2).
	kemEncapsulationSeedLen = 32
	// HashLen is SHA-256 output and the Noise HASHLEN, in bytes (spec §5.2).
	HashLen = 32
	// KeyLen is the AES-256-GCM key, in bytes.
	KeyLen = 32
	// TagLen is the AES-GCM authentication tag, in bytes (spec §5.2).
	TagLen = 16
	// NonceLen is the GCM nonce: 4 zero bytes ‖ 64-bit big-endian counter (spec §5.2).
	NonceLen = 12

	// MaxMessageLen bounds every Noise message, handshake or transport, in bytes
	// (spec §5.2, §9: 65535).
	MaxMessageLen = 65535

	// Message1Overhead is message 1 without payload, in bytes: skem (clear ciphertext),
	// e (X25519 + ML-KEM public), s (both static publics encrypted), payload tag.
	// 3568 (spec §5.6).
	Message1Overhead = KEMCiphertextLen + (DHLen + KEMPublicKeyLen) +
		(DHLen + TagLen) + (KEMPublicKeyLen + TagLen) + TagLen

	// Message2Overhead is message 2 without payload, in bytes: ekem (clear), skem
	// (encrypted), e (both halves, clear), payload tag. 3424 (spec §5.7).
	Message2Overhead = KEMCiphertextLen + (KEMCiphertextLen + TagLen) +
		(DHLen + KEMPublicKeyLen) + TagLen

	// MaxMessage1Payload is the largest payload message 1 can carry, in bytes (61967).
	MaxMessage1Payload = MaxMessageLen - Message1Overhead
	// MaxMessage2Payload is the largest payload message 2 can carry, in bytes (62111).
	MaxMessage2Payload = MaxMessageLen - Message2Overhead

	// MaxNonce is reserved by Noise and never used; a CipherState whose counter reaches
	// it is exhausted (Noise spec §5.1).
	MaxNonce = ^uint64(0)
)

// Implementation constants: our choices.
const (
	// ephemeralRandLen is how many bytes one hybrid ephemeral draws from Config.Rand:
	// an X25519 private scalar then an ML-KEM-768 seed.
	ephemeralRandLen = DHLen + KEMSeedLen
	// peerCacheEntries bounds an Identity's cache of remote static keys (peercache.go):
	// about 8.5 KB each (the parsed ML-KEM-768 key with its matrix Âᵀ, 6 KB in circl;
	// the key bytes twice), so at most ~140 KB per process.
	peerCacheEntries = 16
)
