package netproxy_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/netproxy"
	"github.com/execlab/executor/jsonwire"
)

const validProxy = `{"enabled":true,"enableSocks5":false,"enableSocks5Udp":false,"allowUpstreamProxy":false,` +
	`"dangerouslyAllowAllUnixSockets":false,"mode":"full","allowLocalBinding":false`

// proxyWith returns a networkProxy member whose proxy is validProxy plus extra members.
func proxyWith(extra string) string {
	if extra == "" {
		return `{"proxy":` + validProxy + `}}`
	}
	return `{"proxy":` + validProxy + `,` + extra + `}}`
}

// check decodes raw and checks it with processID and sandboxed, returning the error text
// ("" on success) and failing on a non -32602 error.
func check(t *testing.T, raw, processID string, sandboxed bool) string {
	t.Helper()
	cfg, err := netproxy.Decode(json.RawMessage(raw))
	if err == nil {
		if cfg == nil {
			return "<nil>"
		}
		_, err = cfg.Check(processID, sandboxed)
	}
	if err == nil {
		return ""
	}
	var je *jsonwire.Error
	if !errors.As(err, &je) || je.Code != jsonwire.CodeInvalidParams {
		t.Fatalf("error %v is not a -32602 *jsonwire.Error", err)
	}
	return je.Message
}

func TestDecode_AbsentAndNull(t *testing.T) {
	for _, raw := range []string{"", "null", " null "} {
		cfg, err := netproxy.Decode(json.RawMessage(raw))
		if cfg != nil || err != nil {
			t.Errorf("Decode(%q) = %v, %v; want nil, nil", raw, cfg, err)
		}
	}
}

// TestCheck_Texts pins the reference's texts (all observed from codex 0.171.0; the
// conformance scenarios netproxy_* replay them against the releases).
func TestCheck_Texts(t *testing.T) {
	tests := []struct {
		name, raw, pid string
		sandboxed      bool
		want           string
	}{
		{"valid", proxyWith(""), "p", false, ""},
		{"not an object", `"x"`, "p", false, `invalid type: string "x", expected struct RemoteNetworkProxyLaunchConfig`},
		{"missing proxy", `{}`, "p", false, "missing field `proxy`"},
		{"proxy sequence", `{"proxy":[]}`, "p", false, "invalid type: sequence, expected struct RemoteNetworkProxyConfig"},
		{"proxy null", `{"proxy":null}`, "p", false, "invalid type: null, expected struct RemoteNetworkProxyConfig"},
		{"missing enabled first", `{"proxy":{"mode":"full"}}`, "p", false, "missing field `enabled`"},
		{"missing allowLocalBinding last", `{"proxy":{"enabled":true,"enableSocks5":false,"enableSocks5Udp":false,"allowUpstreamProxy":false,"dangerouslyAllowAllUnixSockets":false,"mode":"full"}}`, "p", false, "missing field `allowLocalBinding`"},
		{"launch sequence", `[]`, "p", false, "invalid length 0, expected struct RemoteNetworkProxyLaunchConfig with 5 elements"},
		{"mode case", strings.Replace(proxyWith(""), `"full"`, `"Full"`, 1), "p", false, "unknown variant `Full`, expected `limited` or `full`"},
		{"domain variant", proxyWith(`"domains":{"x":"bogus"}`), "p", false, "unknown variant `bogus`, expected one of `none`, `allow`, `deny`"},
		{"domain empty map", proxyWith(`"domains":{"x":{}}`), "p", false, "invalid value: map, expected map with a single key"},
		{"domain number", proxyWith(`"domains":{"x":1}`), "p", false, "invalid type: number, expected string or map"},
		{"domains null", proxyWith(`"domains":null`), "p", false, ""},
		{"domain map form", proxyWith(`"domains":{"x":{"allow":null}}`), "p", false, ""},
		{"unixSockets type", proxyWith(`"unixSockets":"x"`), "p", false, `invalid type: string "x", expected struct NetworkUnixSocketPermissions`},
		{"unixSockets none", proxyWith(`"unixSockets":{"/a":"none"}`), "p", false, "unknown variant `none`, expected `allow` or `deny`"},
		{"reviewDomains null", proxyWith(`"reviewDomains":null`), "p", false, "invalid type: null, expected a sequence"},
		{"auditMetadata null", `{"proxy":` + validProxy + `},"auditMetadata":null}`, "p", false, "invalid type: null, expected struct NetworkProxyAuditMetadata"},
		{"timeout string", `{"proxy":` + validProxy + `},"policyDecisionTimeoutMs":"10"}`, "p", false, `invalid type: string "10", expected u64`},
		{"timeout negative", `{"proxy":` + validProxy + `},"policyDecisionTimeoutMs":-1}`, "p", false, "invalid number"},
		{"timeout max", `{"proxy":` + validProxy + `},"policyDecisionTimeoutMs":18446744073709551615}`, "p", false, ""},
		{"timeout zero beats disabled", `{"proxy":{"enabled":false,"enableSocks5":false,"enableSocks5Udp":false,"allowUpstreamProxy":false,"dangerouslyAllowAllUnixSockets":false,"mode":"full","allowLocalBinding":false},"policyDecisionTimeoutMs":0}`, "", false, "network policy decision callback timeout must be nonzero"},
		{"callback id empty", `{"proxy":` + validProxy + `},"policyDecisionTimeoutMs":5}`, "", false, "callback-enabled process ID must be non-empty and at most 256 bytes"},
		{"callback id 257", `{"proxy":` + validProxy + `},"policyDecisionTimeoutMs":5}`, strings.Repeat("p", 257), false, "callback-enabled process ID must be non-empty and at most 256 bytes"},
		{"callback id 258 bytes", `{"proxy":` + validProxy + `},"policyDecisionTimeoutMs":5}`, strings.Repeat("é", 129), false, "callback-enabled process ID must be non-empty and at most 256 bytes"},
		{"callback id 256", `{"proxy":` + validProxy + `},"policyDecisionTimeoutMs":5}`, strings.Repeat("p", 256), false, ""},
		{"empty id without callbacks", proxyWith(""), "", false, ""},
		{"transparent without sandbox beats disabled", `{"proxy":{"enabled":false,"enableSocks5":false,"enableSocks5Udp":false,"allowUpstreamProxy":false,"dangerouslyAllowAllUnixSockets":false,"mode":"full","allowLocalBinding":false,"transparentTcp":true}}`, "p", false, "transparent TCP requires a managed Linux sandbox"},
		{"transparent without socks", proxyWith(`"transparentTcp":true,"domains":{"a b":"deny"}`), "p", true, "invalid network proxy config: transparent_tcp requires an enabled managed SOCKS5 proxy"},
		{"disabled", strings.Replace(proxyWith(`"domains":{"a b":"deny"}`), `"enabled":true`, `"enabled":false`, 1), "p", false, "invalid network proxy config: executor-local network proxy launch requires an enabled proxy"},
		{"unix socket before domains", proxyWith(`"domains":{"a b":"deny"},"unixSockets":{"/x":"deny","/y":"allow","a":"allow"}`), "p", false, `invalid network proxy config: invalid network.allow_unix_sockets[1]: expected a NUL-free absolute path for Linux, got "a"`},
		{"unix socket NUL", proxyWith(`"unixSockets":{"/a\u0000b":"allow"}`), "p", false, `invalid network proxy config: invalid network.allow_unix_sockets[0]: expected a NUL-free absolute path for Linux, got "/a\0b"`},
		{"denied before allowed", proxyWith(`"domains":{"a a":"allow","b b":"deny"}`), "p", false, "invalid network proxy config: unsupported domain pattern syntax: b b"},
		{"allowed sorted", proxyWith(`"domains":{"b b":"allow","a a":"allow"}`), "p", false, "invalid network proxy config: unsupported domain pattern syntax: a a"},
		{"none not validated", proxyWith(`"domains":{"a b":"none","*":"none"}`), "p", false, ""},
		{"denied global", proxyWith(`"domains":{" * ":"deny"}`), "p", false, "invalid network proxy config: invalid value for network.denied_domains: * (allowed exact hosts or scoped wildcards like *.example.com or **.example.com)"},
		{"allowed global", proxyWith(`"domains":{"*":"allow"}`), "p", false, ""},
		{"review after domains", proxyWith(`"domains":{"z z":"allow"},"reviewDomains":["y y"]`), "p", false, "invalid network proxy config: unsupported domain pattern syntax: z z"},
		{"review in order", proxyWith(`"reviewDomains":["y y","x x"]`), "p", false, "invalid network proxy config: unsupported domain pattern syntax: y y"},
		{"empty pattern", proxyWith(`"domains":{"":"allow"}`), "p", false, "invalid network proxy config: domain pattern is empty"},
		{"scope only", proxyWith(`"domains":{"*.":"allow"}`), "p", false, "invalid network proxy config: domain pattern is empty"},
		{"repeated wildcard", proxyWith(`"domains":{"***.x.com":"allow"}`), "p", false, "invalid network proxy config: unsupported repeated wildcard: ***.x.com"},
		{"brackets", proxyWith(`"domains":{"[x]":"allow"}`), "p", false, "invalid network proxy config: brackets are only supported for IPv6 literals or [*]: [x]"},
		{"ipv6 forms", proxyWith(`"domains":{"[::1]":"allow","::1":"allow","[::1]:80":"allow","x.com:80":"allow","a?.com":"allow","*.*.com":"allow"}`), "p", false, ""},
		{"slash", proxyWith(`"domains":{"http://x.com":"allow"}`), "p", false, "invalid network proxy config: unsupported domain pattern syntax: http://x.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := check(t, tt.raw, tt.pid, tt.sandboxed); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
