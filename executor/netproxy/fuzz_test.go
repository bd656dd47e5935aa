package netproxy_test

import (
	"encoding/json"
	"testing"

	"github.com/execlab/executor/executor/netproxy"
)

// FuzzDecode feeds arbitrary networkProxy members through Decode and Check: neither may
// panic, every failure is a -32602 with a non-empty text, and the result is
// deterministic (map iteration order must not leak into which error wins).
func FuzzDecode(f *testing.F) {
	f.Add([]byte(proxyWith("")), "p", false)
	f.Add([]byte(proxyWith(`"domains":{"b b":"allow","a a":"deny","*":"allow"},"reviewDomains":["x"]`)), "p", true)
	f.Add([]byte(proxyWith(`"unixSockets":{"/a":"allow","b":"allow"},"transparentTcp":true`)), "", true)
	f.Add([]byte(`{"proxy":`+validProxy+`},"policyDecisionTimeoutMs":0}`), "", false)
	f.Add([]byte(`[{"enabled":true},{},null,null,5]`), "p", false)
	f.Add([]byte(proxyWith(`"credentialMasking":true,"credentialProviders":{"c":{"env":["CT"],"auth":["bogus"],"x":1},"d":true}`)), "p", false)
	f.Fuzz(func(t *testing.T, raw []byte, pid string, sandboxed bool) {
		first := outcome(raw, pid, sandboxed)
		for range 3 {
			if again := outcome(raw, pid, sandboxed); again != first {
				t.Fatalf("nondeterministic: %q then %q", first, again)
			}
		}
	})
}

func outcome(raw []byte, pid string, sandboxed bool) string {
	cfg, err := netproxy.Decode(json.RawMessage(raw))
	if err != nil {
		return "decode: " + err.Error()
	}
	if cfg == nil {
		return "absent"
	}
	if _, err := cfg.Check(pid, sandboxed); err != nil {
		return "check: " + err.Error()
	}
	return "ok"
}
