package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"strconv"
	"strings"

	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
)

// MethodCapabilityRootsDiscover is capabilityRoots/discoverV1
// (spec/capabilities-0.171.0.md §4).
const MethodCapabilityRootsDiscover = "capabilityRoots/discoverV1"

// CapabilityRootsDiscoverParams are the params of capabilityRoots/discoverV1 (Rust
// WireCapabilityRootsDiscoverParams, 1 field).
type CapabilityRootsDiscoverParams struct {
	Roots []CapabilityRootRequest `json:"roots"`
}

// CapabilityRootRequest is one root to scan (Rust WireCapabilityRootDiscoverRequest, 3
// fields). Sandbox may be nil (absent or null): the root is scanned with the executor's
// privileges. Sandbox is an Option without a serde default: in the sequence form all 3
// elements are required (observed from codex 0.171.0 and 0.169.0).
type CapabilityRootRequest struct {
	ID      string             `json:"id"`
	Path    PathURI            `json:"path"`
	Sandbox *CapabilitySandbox `json:"sandbox"`
}

// CapabilitySandbox is a root's sandbox context. The reference decodes it as its own
// struct, WireFileSystemSandboxContext (10 fields, permissions of type
// ExecPermissionProfile), where fs/* decode FileSystemSandboxContext; in the map form,
// the one clients send, the members and their rules are those of policy.Context, only
// the texts differ (observed from codex 0.171.0 and 0.169.0 by the differential test in
// executor/capdiscover). Deviation: of the sequence form only the empty one is reproduced
// ("invalid length 0, expected struct WireFileSystemSandboxContext with 10 elements"); a
// non-empty sequence is refused as "invalid type: sequence, …" (the reference decodes its
// positional fields, which include one policy.Context does not have).
type CapabilitySandbox struct{ policy.Context }

// Type names in the sandbox context's decode errors, fs/* form → discovery form.
var capabilitySandboxNames = strings.NewReplacer(
	"struct FileSystemSandboxContext", "struct WireFileSystemSandboxContext",
	"internally tagged enum PermissionProfile", "internally tagged enum ExecPermissionProfile",
)

// UnmarshalJSON decodes the context with the reference's texts.
func (c *CapabilitySandbox) UnmarshalJSON(data []byte) error {
	t := bytes.TrimSpace(data)
	switch {
	case len(t) == 0 || t[0] != '{' && t[0] != '[':
		return errors.New("invalid type: " + jsonwire.Unexpected(data) + ", expected struct WireFileSystemSandboxContext")
	case t[0] == '[':
		if bytes.Equal(bytes.Join(bytes.Fields(t), nil), []byte("[]")) {
			return errors.New("invalid length 0, expected struct WireFileSystemSandboxContext with 10 elements")
		}
		return errors.New("invalid type: sequence, expected struct WireFileSystemSandboxContext")
	}
	if err := c.Context.UnmarshalJSON(data); err != nil {
		msg := err.Error()
		if msg == "invalid type: number, expected internally tagged enum PermissionProfile" {
			msg = permissionsNumberError(permissionsMember(data))
		}
		return errors.New(capabilitySandboxNames.Replace(msg))
	}
	return nil
}

// permissionsMember returns the raw permissions member of a context object (the last one,
// as serde_json keeps it; duplicates fail earlier).
func permissionsMember(data []byte) json.RawMessage {
	var m struct {
		Permissions json.RawMessage `json:"permissions"`
	}
	_ = json.Unmarshal(data, &m)
	return m.Permissions
}

// permissionsNumberError is the reference's text for a number where the internally tagged
// ExecPermissionProfile belongs (observed from codex 0.171.0 and 0.169.0). serde meets the
// number through a serde_json::Value with arbitrary precision: an integer that fits 64 bits
// is "integer `5`", one that fits 128 bits "integer `N` as u128" (or i128), a number
// written exactly as serde_json prints its f64 (ryuFormat: 1.5, 1.0, 1e16) "floating point
// `1.5`"; any other (1e2, 1.50, 2^128) is handed over as the private number map, which
// has no `type` key.
func permissionsNumberError(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	const tail = ", expected internally tagged enum ExecPermissionProfile"
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return "invalid type: integer `" + strconv.FormatUint(u, 10) + "`" + tail
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return "invalid type: integer `" + strconv.FormatInt(i, 10) + "`" + tail
	}
	if n, ok := new(big.Int).SetString(s, 10); ok {
		switch {
		case n.Sign() > 0 && n.BitLen() <= 128:
			return "invalid type: integer `" + n.String() + "` as u128" + tail
		case n.Sign() < 0 && (new(big.Int).Neg(n).BitLen() <= 127 || n.Cmp(minI128) == 0):
			return "invalid type: integer `" + n.String() + "` as i128" + tail
		}
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && strings.Replace(ryuFormat(f), "e+", "e", 1) == s {
		return "invalid type: floating point `" + ryuFormat(f) + "`" + tail
	}
	return "missing field `type`"
}

// ryuFormat renders a finite f64 as the ryu crate's format_finite (serde_json's float
// output), except that a positive exponent carries "+" as the reference's texts show it:
// shortest round-trip digits; plain notation with at least one fractional digit while the
// decimal point falls within 16 digits, or 5 zeros after it; else scientific "1e+16",
// "1.5e-7". A number is visited as a float only when written exactly as ryu prints it.
func ryuFormat(f float64) string {
	e := strconv.FormatFloat(f, 'e', -1, 64) // [-]d[.ddd]e±XX
	sign := ""
	if e[0] == '-' {
		sign, e = "-", e[1:]
	}
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	kk := x + 1 // position of the decimal point after the first digit
	n := len(digits)
	switch {
	case n <= kk && kk <= 16:
		return sign + digits + strings.Repeat("0", kk-n) + ".0"
	case 0 < kk && kk <= 16:
		return sign + digits[:kk] + "." + digits[kk:]
	case -5 < kk && kk <= 0:
		return sign + "0." + strings.Repeat("0", -kk) + digits
	}
	exp10 := strconv.Itoa(kk - 1)
	if kk > 1 {
		exp10 = "+" + exp10 // observed: 1e16 is reported as `1e+16`
	}
	if n == 1 {
		return sign + digits + "e" + exp10
	}
	return sign + digits[:1] + "." + digits[1:] + "e" + exp10
}

var minI128 = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 127))

// MarshalJSON encodes the context.
func (c *CapabilitySandbox) MarshalJSON() ([]byte, error) { return c.Context.MarshalJSON() }

// CapabilityRootsDiscoverResult is the result: one entry per requested root, in request
// order.
type CapabilityRootsDiscoverResult struct {
	Roots []CapabilityRootDiscovery `json:"roots"`
}

// CapabilityRootDiscovery is what one root holds. Every member is always sent: Plugin and
// Error are null when absent, the slices [] when empty. When Error is set the other
// members are empty.
//
//	{"id":"r1","path":"file:///w/root1",
//	 "plugin":{"manifest":{"path":…,"contents":…},"mcpConfig":{…}|null,"appsConfig":{…}|null}|null,
//	 "skills":[{"instructions":{"path":…/SKILL.md,"contents":…},"metadata":{…}|null}],
//	 "namespaceManifests":[{"path":…,"contents":…}],
//	 "warnings":["…"],
//	 "error":null}
type CapabilityRootDiscovery struct {
	ID                 string            `json:"id"`
	Path               PathURI           `json:"path"`
	Plugin             *CapabilityPlugin `json:"plugin"`
	Skills             []CapabilitySkill `json:"skills"`
	NamespaceManifests []CapabilityFile  `json:"namespaceManifests"`
	Warnings           []string          `json:"warnings"`
	Error              *string           `json:"error"`
}

// CapabilityFile is one file read during discovery: its URI and its UTF-8 contents.
type CapabilityFile struct {
	Path     PathURI `json:"path"`
	Contents string  `json:"contents"`
}

// CapabilityPlugin is the root's own plugin: its manifest and the MCP and apps
// configuration files it declares (nil when absent).
type CapabilityPlugin struct {
	Manifest   CapabilityFile  `json:"manifest"`
	MCPConfig  *CapabilityFile `json:"mcpConfig"`
	AppsConfig *CapabilityFile `json:"appsConfig"`
}

// CapabilitySkill is one SKILL.md and its sibling agents/openai.yaml (nil when absent).
type CapabilitySkill struct {
	Instructions CapabilityFile  `json:"instructions"`
	Metadata     *CapabilityFile `json:"metadata"`
}

// RustName implements jsonwire.RustNamed.
func (CapabilityRootsDiscoverParams) RustName() string { return "WireCapabilityRootsDiscoverParams" }

// RustName implements jsonwire.RustNamed.
func (CapabilityRootRequest) RustName() string { return "WireCapabilityRootDiscoverRequest" }
