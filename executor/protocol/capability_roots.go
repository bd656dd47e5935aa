package protocol

import (
	"bytes"
	"errors"

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

// CapabilitySandbox is a root's sandbox context: a FileSystemSandboxContext that the
// reference names WireFileSystemSandboxContext in its type errors ("invalid type: number,
// expected struct WireFileSystemSandboxContext", observed from codex 0.171.0 and
// 0.169.0); members decode as in policy.Context.
type CapabilitySandbox struct{ policy.Context }

// UnmarshalJSON decodes the context with the reference's texts.
func (c *CapabilitySandbox) UnmarshalJSON(data []byte) error {
	if t := bytes.TrimSpace(data); len(t) == 0 || t[0] != '{' {
		return errors.New("invalid type: " + jsonwire.Unexpected(data) + ", expected struct WireFileSystemSandboxContext")
	}
	return c.Context.UnmarshalJSON(data)
}

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
