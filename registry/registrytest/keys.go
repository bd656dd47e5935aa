package registrytest

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"

	"github.com/execlab/executor/registry/api"
)

// RandomKeyJSON returns a well-formed public-key JSON (spec/registry-auth.md §9) of random
// bytes, fresh on each call: the registry checks a key's shape and uniqueness, not the
// key, so registrations and connects in tests need no real key pair.
func RandomKeyJSON() json.RawMessage {
	x, m := make([]byte, 32), make([]byte, 1184)
	_, _ = rand.Read(x)
	_, _ = rand.Read(m)
	b, _ := json.Marshal(map[string]string{"suite": api.KeySuite,
		"x25519_public_key": base64.StdEncoding.EncodeToString(x), "mlkem768_public_key": base64.StdEncoding.EncodeToString(m)})
	return b
}
