package sandbox

// Managed (proxy-only) network: the request's managedNetwork, the choice of proxy
// variables to route, and the stage encodings (spec/sandbox.md §1.1, §2.10, §3.10).
//
// Flow: the launcher stage (host network namespace) reads the proxy variables from
// its environment (the request env), keeps the loopback endpoints (proxyurl.go), fails
// closed with exit 101 when there are none, and serves one Unix socket per distinct
// proxy port in a private directory bound read-only into the sandbox. The route spec
// (--proxy-route-spec) tells the inner stage, inside the new network namespace, which
// variable goes to which socket; the inner stage re-parses the variables itself, so no
// proxy URL (which may hold credentials) ever appears on a command line.
//
//	command --TCP--> inner bridge 127.0.0.1:<p> --Unix--> <dir>/<port>.sock
//	        --launcher bridge--TCP--> host proxy 127.0.0.1:<port>

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/execlab/executor/internal/whatwg"
)

// ManagedNetwork is process/start's managedNetwork (spec/sandbox.md §1.1). The zero
// value is the reference's default for an absent object. Values are read only.
type ManagedNetwork struct {
	// TransparentTcp captures the command's direct TCP connections and name lookups
	// inside the namespace and sends them through the SOCKS5 proxy of the routed
	// variables (spec/network-proxy.md §8.3; sandbox/transparent). Optional in the
	// --managed-network value (codex 0.171.0 puts it first).
	TransparentTcp bool `json:"transparentTcp,omitempty"`
	// LoopbackPorts, when non-empty, must list every routed proxy port.
	LoopbackPorts []uint16 `json:"loopbackPorts"`
	// AllowLocalBinding has no Linux effect (observed from codex 0.169.0).
	AllowLocalBinding bool `json:"allowLocalBinding"`
	// AllowUnixSockets has no effect on AF_UNIX creation (observed).
	AllowUnixSockets []string `json:"allowUnixSockets"`
	// DangerouslyAllowAllUnixSockets lets the command create AF_UNIX sockets.
	DangerouslyAllowAllUnixSockets bool `json:"dangerouslyAllowAllUnixSockets"`
}

// encodeManagedNetwork is the --managed-network value: all four fields filled in.
func encodeManagedNetwork(m *ManagedNetwork) string {
	c := *m
	if c.LoopbackPorts == nil {
		c.LoopbackPorts = []uint16{}
	}
	if c.AllowUnixSockets == nil {
		c.AllowUnixSockets = []string{}
	}
	b, _ := json.Marshal(&c) // cannot fail: plain fields
	return string(b)
}

// decodeManagedNetwork parses a --managed-network value strictly (every field present,
// no unknown fields); both ends are this binary.
func decodeManagedNetwork(s string) (*ManagedNetwork, error) {
	if len(s) > maxStageFlagJSON {
		return nil, errors.New("decoding managed network: value too long")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return nil, fmt.Errorf("decoding managed network: %w", err)
	}
	for _, k := range []string{"loopbackPorts", "allowLocalBinding", "allowUnixSockets", "dangerouslyAllowAllUnixSockets"} {
		if v, ok := raw[k]; !ok || bytes.Equal(v, []byte("null")) {
			return nil, fmt.Errorf("decoding managed network: missing %s", k)
		}
	}
	var m ManagedNetwork
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("decoding managed network: %w", err)
	}
	if dec.More() {
		return nil, errors.New("decoding managed network: trailing data")
	}
	return &m, nil
}

// proxyVar is one routed proxy variable of the command env.
type proxyVar struct {
	key string // as spelled in the env
	ep  proxyEndpoint
}

// proxyRefusal is a managed-network fail-closed row (exit 101, spec/sandbox.md §2.10).
type proxyRefusal struct{ msg string }

func (e *proxyRefusal) Error() string { return e.msg }

// isProxyKey reports whether an env name is a routed proxy variable (any case).
func isProxyKey(k string) bool {
	for _, p := range proxyEnvKeys {
		if strings.EqualFold(k, p) {
			return true
		}
	}
	return false
}

// planProxyVars picks the routed variables from env (KEY=VALUE entries, the launcher's
// own environment = the request env) and applies the fail-closed rules in the
// reference's order: no non-empty proxy variable; none a loopback endpoint; a routed
// port missing from a non-empty LoopbackPorts. Values that are not loopback endpoints
// are left untouched and not routed. Errors are *proxyRefusal.
func planProxyVars(env []string, m *ManagedNetwork) ([]proxyVar, error) {
	present := false
	var vars []proxyVar
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !isProxyKey(k) || whatwg.Trim(v) == "" {
			continue
		}
		present = true
		if ep, ok := parseProxyEndpoint(v); ok {
			vars = append(vars, proxyVar{key: k, ep: ep})
		}
	}
	switch {
	case !present:
		return nil, &proxyRefusal{msgProxyNoEnv}
	case len(vars) == 0:
		return nil, &proxyRefusal{msgProxyNoLoopback}
	}
	if len(m.LoopbackPorts) > 0 {
		for _, v := range vars {
			if !slices.Contains(m.LoopbackPorts, v.ep.port) {
				return nil, &proxyRefusal{msgProxyOutsidePorts}
			}
		}
	}
	return vars, nil
}

// routeSpec is the --proxy-route-spec value: which variable goes to which socket.
//
//	{"routes":[{"env_key":"HTTP_PROXY","socket_path":"/tmp/codex-linux-sandbox-proxy-7-0/3128.sock"}]}
type routeSpec struct {
	Routes []proxyRoute `json:"routes"`
	// TransparentSocket is the socket of the SOCKS5 route that captured connections
	// go to (transparent TCP only).
	TransparentSocket string `json:"transparent_socket,omitempty"`
}

type proxyRoute struct {
	EnvKey     string `json:"env_key"`
	SocketPath string `json:"socket_path"`
}

func (s *routeSpec) encode() string {
	b, _ := json.Marshal(s) // cannot fail: plain fields
	return string(b)
}

// decodeRouteSpec parses and validates a --proxy-route-spec value: at least one route,
// each a distinct routed variable name and an absolute clean socket path.
func decodeRouteSpec(s string) (*routeSpec, error) {
	if len(s) > maxStageFlagJSON {
		return nil, errors.New("decoding proxy route spec: value too long")
	}
	var spec routeSpec
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		return nil, fmt.Errorf("decoding proxy route spec: %w", err)
	}
	if dec.More() {
		return nil, errors.New("decoding proxy route spec: trailing data")
	}
	if len(spec.Routes) == 0 {
		return nil, errors.New("decoding proxy route spec: no routes")
	}
	if t := spec.TransparentSocket; t != "" && (!filepath.IsAbs(t) || filepath.Clean(t) != t) {
		return nil, fmt.Errorf("decoding proxy route spec: socket path %q is not absolute and clean", t)
	}
	seen := map[string]bool{}
	for _, r := range spec.Routes {
		if !isProxyKey(r.EnvKey) || seen[r.EnvKey] {
			return nil, fmt.Errorf("decoding proxy route spec: bad env key %q", r.EnvKey)
		}
		seen[r.EnvKey] = true
		if !filepath.IsAbs(r.SocketPath) || filepath.Clean(r.SocketPath) != r.SocketPath {
			return nil, fmt.Errorf("decoding proxy route spec: socket path %q is not absolute and clean", r.SocketPath)
		}
	}
	return &spec, nil
}

// rewriteProxyEnv returns env with each routed variable pointing at its local bridge
// port (ports maps socket path to port). Every route's variable must still be a
// loopback endpoint; other entries, NO_PROXY included, are kept as they are.
func rewriteProxyEnv(env []string, spec *routeSpec, ports map[string]int) ([]string, error) {
	out := slices.Clone(env)
	for _, r := range spec.Routes {
		found := false
		for i, kv := range out {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k != r.EnvKey {
				continue
			}
			ep, ok := parseProxyEndpoint(v)
			if !ok {
				return nil, fmt.Errorf("rewriting %s: not a loopback proxy endpoint", k)
			}
			out[i] = k + "=" + ep.rewrite(ports[r.SocketPath])
			found = true
		}
		if !found {
			return nil, fmt.Errorf("rewriting %s: variable not set", r.EnvKey)
		}
	}
	return out, nil
}
