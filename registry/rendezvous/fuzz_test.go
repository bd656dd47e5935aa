package rendezvous_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/execlab/executor/registry/rendezvous"
)

// FuzzVerify: no path or query is accepted without the signer's own signature.
func FuzzVerify(f *testing.F) {
	f.Add("/rendezvous/v1/environment/env-1", "g=1&e=1&n=x&sig=AAAA")
	s := rendezvous.NewRandomSigner()
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
