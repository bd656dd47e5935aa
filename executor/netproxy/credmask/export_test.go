package credmask

import (
	"crypto/x509"
	"encoding/pem"
	"math/rand/v2"
)

// RandFromSeed exposes the deterministic generator to tests.
func RandFromSeed(seed uint64) *rand.Rand { return randFromSeed(seed) }

// GenerateForTest generates one string for pattern.
func GenerateForTest(pattern string, r *rand.Rand) (string, error) {
	g, err := newGenerator(pattern)
	if err != nil {
		return "", err
	}
	return g.Generate(r)
}

// KeyPEMForTest is the CA key's PEM, for the secret-scrubbing tests only.
func (c *CA) KeyPEMForTest() []byte {
	der, err := x509.MarshalECPrivateKey(c.key)
	if err != nil {
		panic(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
}

// PathSafeForTest exposes pathSafeForAuthorization.
func PathSafeForTest(p string) bool { return pathSafeForAuthorization(p) }

// LeafCacheLen is the number of cached leaves.
func (c *CA) LeafCacheLen() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// CompileForTest compiles entries and returns how many were kept.
func CompileForTest(entries []ProviderEntry) int { return len(compileProviders(entries, nil)) }
