package netproxy_test

import (
	"encoding/json"
	"testing"

	"github.com/execlab/executor/executor/netproxy"
)

func policy(t testing.TB, mode string, allowLocal bool, extra string) *netproxy.Policy {
	t.Helper()
	raw := `{"proxy":{"enabled":true,"enableSocks5":true,"enableSocks5Udp":false,"allowUpstreamProxy":false,` +
		`"dangerouslyAllowAllUnixSockets":false,"mode":"` + mode + `","allowLocalBinding":` + boolText(allowLocal) + `,` + extra + `}}`
	return checkedPolicy(t, raw)
}

// checkedPolicy decodes raw, a networkProxy member, and checks it for process "p",
// unsandboxed; an error fails t.
func checkedPolicy(t testing.TB, raw string) *netproxy.Policy {
	t.Helper()
	cfg, err := netproxy.Decode(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	p, err := cfg.Check("p", false)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDecide_Order(t *testing.T) {
	full := policy(t, "full", false, `"domains":{"**.example.com":"allow","bad.example.com":"deny","127.0.0.1":"allow","localhost":"allow","*":"none"},"reviewDomains":["review.example.com"]`)
	limited := policy(t, "limited", false, `"domains":{"example.com":"allow"}`)
	local := policy(t, "full", true, `"domains":{"localhost":"allow"}`)
	tests := []struct {
		name string
		p    *netproxy.Policy
		r    netproxy.Request
		want netproxy.Decision
	}{
		{"allowed apex", full, netproxy.Request{Protocol: "http", Host: "Example.COM.", Method: "POST"}, netproxy.Decision{Allowed: true, Reason: "allow", Source: "baseline_policy"}},
		{"allowed sub", full, netproxy.Request{Protocol: "http", Host: "a.b.example.com", Method: "GET"}, netproxy.Decision{Allowed: true, Reason: "allow", Source: "baseline_policy"}},
		{"deny beats allow", full, netproxy.Request{Protocol: "http", Host: "bad.example.com", Method: "GET"}, netproxy.Decision{Reason: "denied", Source: "baseline_policy"}},
		{"review beats allow", full, netproxy.Request{Protocol: "http", Host: "review.example.com", Method: "GET"}, netproxy.Decision{Reason: "not_allowed", Source: "baseline_policy", Askable: true}},
		{"not in allowlist", full, netproxy.Request{Protocol: "http", Host: "other.test", Method: "GET"}, netproxy.Decision{Reason: "not_allowed", Source: "baseline_policy", Askable: true}},
		{"exact local literal allowed", full, netproxy.Request{Protocol: "http", Host: "127.0.0.1", Method: "GET"}, netproxy.Decision{Allowed: true, Reason: "allow", Source: "baseline_policy"}},
		{"other local literal", full, netproxy.Request{Protocol: "http", Host: "127.0.0.2", Method: "GET"}, netproxy.Decision{Reason: "not_allowed_local", Source: "baseline_policy"}},
		{"private literal", full, netproxy.Request{Protocol: "http", Host: "10.1.2.3", Method: "GET"}, netproxy.Decision{Reason: "not_allowed_local", Source: "baseline_policy"}},
		{"ipv6 loopback", full, netproxy.Request{Protocol: "http", Host: "[::1]", Method: "GET"}, netproxy.Decision{Reason: "not_allowed_local", Source: "baseline_policy"}},
		{"localhost not listed", limited, netproxy.Request{Protocol: "http", Host: "localhost", Method: "GET"}, netproxy.Decision{Reason: "not_allowed_local", Source: "baseline_policy"}},
		{"limited GET", limited, netproxy.Request{Protocol: "http", Host: "example.com", Method: "GET"}, netproxy.Decision{Allowed: true, Reason: "allow", Source: "baseline_policy"}},
		{"limited POST", limited, netproxy.Request{Protocol: "http", Host: "example.com", Method: "POST"}, netproxy.Decision{Reason: "method_not_allowed", Source: "mode_guard", ModeGuard: true}},
		{"limited CONNECT", limited, netproxy.Request{Protocol: "https_connect", Host: "example.com", Method: "CONNECT"}, netproxy.Decision{Reason: "mitm_required", Source: "mode_guard", ModeGuard: true}},
		{"limited SOCKS", limited, netproxy.Request{Protocol: "socks5_tcp", Host: "example.com"}, netproxy.Decision{Reason: "method_not_allowed", Source: "mode_guard", ModeGuard: true}},
		{"limited SOCKS before domains", limited, netproxy.Request{Protocol: "socks5_tcp", Host: "other.test"}, netproxy.Decision{Reason: "method_not_allowed", Source: "mode_guard", ModeGuard: true}},
		{"limited denial first", limited, netproxy.Request{Protocol: "http", Host: "other.test", Method: "POST"}, netproxy.Decision{Reason: "not_allowed", Source: "baseline_policy", Askable: true}},
		{"local binding allowed still needs allowlist", local, netproxy.Request{Protocol: "http", Host: "127.0.0.1", Method: "GET"}, netproxy.Decision{Reason: "not_allowed", Source: "baseline_policy", Askable: true}},
		{"local binding allowed", local, netproxy.Request{Protocol: "http", Host: "localhost", Method: "GET"}, netproxy.Decision{Allowed: true, Reason: "allow", Source: "baseline_policy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Decide(tt.r); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDecide_GlobalAllowAndWildcards(t *testing.T) {
	p := policy(t, "full", false, `"domains":{"*":"allow","*.deny.test":"deny","api?.q.test":"deny"}`)
	for host, allowed := range map[string]bool{
		"anything.test": true, "deny.test": true, "x.deny.test": false, "api1.q.test": false, "api12.q.test": true, "localhost": false,
	} {
		if got := p.Decide(netproxy.Request{Protocol: "http", Host: host, Method: "GET"}).Allowed; got != allowed {
			t.Errorf("%s: allowed %v, want %v", host, got, allowed)
		}
	}
}
