package rendezvous_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/execlab/executor/registry/rendezvous"
)

// FuzzVerify: no path or query is accepted without the signer's own signature, whatever
// key id (k=) it names; the signer holds a ring of two keys (ids 7 and 8).
func FuzzVerify(f *testing.F) {
	f.Add("/rendezvous/v1/environment/env-1", "g=1&e=1&n=x&sig=AAAA")
	f.Add("/rendezvous/v1/harness/env-1", "g=1&e=99999999999&k=8&n=x&t=sub&sig=AAAA")
	f.Add("/rendezvous/v1/environment/env-1", "g=1&e=1&k=-7&n=x&sig=AAAA")
	s := rendezvous.NewRandomSigner()
	k7, k8 := make([]byte, rendezvous.SignerKeyLen), make([]byte, rendezvous.SignerKeyLen)
	k8[0] = 1
	if err := s.SetKeys([]rendezvous.SigningKey{{ID: 7, Key: k7}, {ID: 8, Key: k8}}, 8); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, path, query string) {
		q, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		if _, err := s.Verify(path, q, time.Unix(0, 0)); err == nil {
			t.Fatalf("Verify accepted %q?%q", path, query)
		}
	})
}
