package netproxy

// Validation of a decoded LaunchConfig in the reference's order (spec/network-proxy.md
// §2.2 steps 3–6). Step 1 (decoding) is Decode; step 2 (managedNetwork.transparentTcp
// without proxy.transparentTcp) belongs to process/start, which asks TransparentTCP.

import (
	"errors"
	"sort"
	"time"

	"github.com/execlab/executor/jsonwire"
)

// configErrPrefix starts every proxy-config build error (§2.2 step 6).
const configErrPrefix = "invalid network proxy config: "

// The reference's texts for §2.2 steps 3–6.
const (
	msgTimeoutZero        = "network policy decision callback timeout must be nonzero"
	msgCallbackProcessID  = "callback-enabled process ID must be non-empty and at most 256 bytes"
	msgTransparentSandbox = "transparent TCP requires a managed Linux sandbox"
	msgDisabled           = "executor-local network proxy launch requires an enabled proxy"
	msgTransparentSocks   = "transparent_tcp requires an enabled managed SOCKS5 proxy"
	msgDeniedGlobal       = "invalid value for network.denied_domains: %s (allowed exact hosts or scoped wildcards like *.example.com or **.example.com)"
	msgUnixSocketPath     = "invalid network.allow_unix_sockets[%d]: expected a NUL-free absolute path for Linux, got %s"
)

// TransparentTCP reports whether c asks for transparent TCP (proxy.transparentTcp); a
// nil c (no networkProxy) does not.
func (c *LaunchConfig) TransparentTCP() bool { return c != nil && c.Proxy.TransparentTCP }

// Check validates c for a process/start with the given processId, where sandboxed says
// whether the request carries a sandbox, and compiles its policy. The first failing
// check, in the reference's order, is returned as a *jsonwire.Error with
// CodeInvalidParams and the reference's text:
//
//  1. policyDecisionTimeoutMs == 0;
//  2. callbacks enabled and processId empty or over MaxCallbackProcessIDBytes bytes;
//  3. proxy.transparentTcp without a sandbox;
//  4. the proxy config build, each text prefixed "invalid network proxy config: ":
//     enabled false; transparentTcp without enableSocks5; allowed unix socket paths
//     (sorted) that are not NUL-free absolute paths; denied domains (sorted; bare "*"
//     refused); allowed domains (sorted); reviewDomains (in order).
//
// Domains with permission "none" and denied unix sockets are not validated, as in the
// reference.
func (c *LaunchConfig) Check(processID string, sandboxed bool) (*Policy, error) {
	if t := c.PolicyDecisionTimeoutMs; t != nil && *t == 0 {
		return nil, jsonwire.InvalidParams(msgTimeoutZero)
	}
	if c.PolicyDecisionTimeoutMs != nil && (processID == "" || len(processID) > MaxCallbackProcessIDBytes) {
		return nil, jsonwire.InvalidParams(msgCallbackProcessID)
	}
	if c.Proxy.TransparentTCP && !sandboxed {
		return nil, jsonwire.InvalidParams(msgTransparentSandbox)
	}
	pol, err := buildPolicy(&c.Proxy)
	if err != nil {
		return nil, jsonwire.InvalidParams("%s%s", configErrPrefix, err.Error())
	}
	if t := c.PolicyDecisionTimeoutMs; t != nil {
		pol.CallbackTimeout = saturatingMillis(*t)
	}
	return pol, nil
}

// saturatingMillis converts ms to a Duration, saturating instead of overflowing (the
// reference accepts u64::MAX, §2).
func saturatingMillis(ms uint64) time.Duration {
	const maxMs = uint64(1<<63-1) / uint64(time.Millisecond)
	if ms > maxMs {
		return time.Duration(1<<63 - 1)
	}
	return time.Duration(ms) * time.Millisecond
}

// buildPolicy is §2.2 step 6: the proxy config build, errors without their prefix.
func buildPolicy(p *ProxyConfig) (*Policy, error) {
	if !p.Enabled {
		return nil, errors.New(msgDisabled)
	}
	if p.TransparentTCP && !p.EnableSocks5 {
		return nil, errors.New(msgTransparentSocks)
	}
	if p.UnixSockets != nil {
		var allowed []string
		for path, perm := range *p.UnixSockets {
			if perm == "allow" {
				allowed = append(allowed, path)
			}
		}
		sort.Strings(allowed)
		for i, path := range allowed {
			if !validUnixSocketPath(path) {
				return nil, errorf(msgUnixSocketPath, i, rustDebug(path))
			}
		}
	}
	var denied, allowed []string
	var domains map[string]Permission
	if p.Domains != nil {
		domains = *p.Domains
	}
	for pattern, perm := range domains {
		switch perm {
		case PermissionDeny:
			denied = append(denied, pattern)
		case PermissionAllow:
			allowed = append(allowed, pattern)
		}
	}
	// The reference keeps domains in a BTreeMap: byte order, as Go compares strings.
	sort.Strings(denied)
	sort.Strings(allowed)
	deny, err := compilePatterns(denied, false)
	if errors.Is(err, errGlobalWildcard) {
		// The reference names the normalised pattern ("*" for " * ").
		return nil, errorf(msgDeniedGlobal, "*")
	}
	if err != nil {
		return nil, err
	}
	allow, err := compilePatterns(allowed, true)
	if err != nil {
		return nil, err
	}
	review, err := compilePatterns(p.ReviewDomains, true)
	if err != nil {
		return nil, err
	}
	pol := &Policy{
		Mode:              p.Mode,
		AllowLocalBinding: p.AllowLocalBinding,
		AllowUpstream:     p.AllowUpstreamProxy,
		EnableSocks5:      p.EnableSocks5,
		deny:              deny,
		allow:             allow,
		review:            review,
		allowedExact:      map[string]bool{},
	}
	for _, a := range allowed {
		pol.allowedExact[normalizePattern(a)] = true
	}
	return pol, nil
}

// validUnixSocketPath reports whether path is absolute and NUL-free (Linux rules).
func validUnixSocketPath(path string) bool {
	if len(path) == 0 || path[0] != '/' {
		return false
	}
	for i := 0; i < len(path); i++ {
		if path[i] == 0 {
			return false
		}
	}
	return true
}

// rustDebug quotes s as Rust's Debug for str does, through jsonwire's one
// implementation (its "invalid type" wording).
func rustDebug(s string) string {
	raw, _ := jsonMarshalString(s)
	const prefix = "string "
	u := jsonwire.Unexpected(raw)
	if len(u) > len(prefix) && u[:len(prefix)] == prefix {
		return u[len(prefix):]
	}
	return `"` + s + `"`
}
