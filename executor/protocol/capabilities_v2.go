package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox/policy"
)

// capabilities/discoverV2 (spec/capabilities-0.171.0.md §5): the executor's own skills
// and installed plugins, parsed. Advertised by Capabilities.CapabilityDiscoveryV2.

// MethodCapabilitiesDiscoverV2 is capabilities/discoverV2.
const MethodCapabilitiesDiscoverV2 = "capabilities/discoverV2"

// DiscoverV2Params are the params of capabilities/discoverV2 (Rust
// DiscoverV2CapabilitiesRequest, 2 fields). Cwd is required and decoded as a PathURI but
// selects nothing (observed from codex 0.171.0 and 0.169.0: repository skills below it
// are not returned, and a cwd that does not exist is accepted). Sandbox, the
// FileSystemSandboxContext of the fs/* methods, may be nil (absent or null; it may also be
// left out of the sequence form).
type DiscoverV2Params struct {
	Cwd     PathURI          `json:"cwd"`
	Sandbox *DiscoverSandbox `json:"sandbox,omitempty"`
}

// DiscoverSandbox is discoverV2's sandbox context: policy.Context's members and rules,
// with the reference's texts, which name the struct FileSystemSandboxContext (9
// elements) and the permissions enum ExecPermissionProfile (observed from codex 0.171.0
// and 0.169.0). Deviation: of the sequence form only the empty one is reproduced, as for
// CapabilitySandbox.
type DiscoverSandbox struct{ policy.Context }

var discoverSandboxNames = strings.NewReplacer(
	"internally tagged enum PermissionProfile", "internally tagged enum ExecPermissionProfile",
)

// UnmarshalJSON decodes the context with the reference's texts.
func (c *DiscoverSandbox) UnmarshalJSON(data []byte) error {
	t := bytes.TrimSpace(data)
	switch {
	case len(t) == 0 || t[0] != '{' && t[0] != '[':
		return errors.New("invalid type: " + jsonwire.Unexpected(data) + ", expected struct FileSystemSandboxContext")
	case t[0] == '[':
		if bytes.Equal(bytes.Join(bytes.Fields(t), nil), []byte("[]")) {
			return errors.New("invalid length 0, expected struct FileSystemSandboxContext with 9 elements")
		}
		return errors.New("invalid type: sequence, expected struct FileSystemSandboxContext")
	}
	err := c.Context.UnmarshalJSON(data)
	// Here cwd is required, declared after permissions (observed: {permissions} alone is
	// "missing field `cwd`", {permissions, cwd} "missing field `windowsSandboxLevel`").
	if msg := errText(err); (err == nil || strings.HasPrefix(msg, "missing field `") && msg != "missing field `permissions`") && !hasMember(data, "cwd") {
		return errors.New("missing field `cwd`")
	}
	if err != nil {
		msg := err.Error()
		if msg == "invalid type: number, expected internally tagged enum PermissionProfile" {
			msg = permissionsNumberError(permissionsMember(data))
		}
		return errors.New(discoverSandboxNames.Replace(msg))
	}
	return nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// hasMember reports whether the JSON object data has the key.
func hasMember(data []byte, key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}

// RustName implements jsonwire.RustNamed.
func (DiscoverV2Params) RustName() string { return "DiscoverV2CapabilitiesRequest" }

// DiscoverV2Result is the result of capabilities/discoverV2. The slices are never nil.
type DiscoverV2Result struct {
	Plugins  []ExecutorPlugin `json:"plugins"`
	Skills   []ExecutorSkill  `json:"skills"`
	Warnings []string         `json:"warnings"`
}

// ExecutorPlugin is one installed plugin: ID is "<plugin>@<marketplace>" (the cache
// directory names), Version the version directory's name, Root that directory.
type ExecutorPlugin struct {
	ID             string           `json:"id"`
	DisplayName    string           `json:"displayName"`
	RemotePluginID *string          `json:"remotePluginId"` // always nil (observed)
	Version        string           `json:"version"`
	Root           PathURI          `json:"root"`
	Files          CapabilityPlugin `json:"files"`
	Skills         []ExecutorSkill  `json:"skills"`
}

// ExecutorSkill is one parsed SKILL.md. DiscoveryRoot is nil for a plugin's skills (the
// member is then absent, as the reference omits it).
type ExecutorSkill struct {
	Name             string              `json:"name"`
	Description      string              `json:"description"`
	ShortDescription *string             `json:"shortDescription"`
	Path             PathURI             `json:"path"`
	DiscoveryRoot    *SkillDiscoveryRoot `json:"discoveryRoot,omitempty"`
	Dependencies     *SkillDependencies  `json:"dependencies"`
	Policy           *SkillPolicy        `json:"policy"`
}

// SkillDiscoveryRoot names the location a standalone skill was found in: ID
// "codex-home-skills" or "user-agent-skills", Path the location's directory.
type SkillDiscoveryRoot struct {
	ID   string  `json:"id"`
	Path PathURI `json:"path"`
}

// SkillDependencies are the tools an agents/openai.yaml declares (never empty).
type SkillDependencies struct {
	Tools []SkillToolDependency `json:"tools"`
}

// SkillToolDependency is one declared tool; OAuthCallbackPort is always nil (observed:
// openai.yaml's oauth_callback_port is not read).
type SkillToolDependency struct {
	Type              string  `json:"type"`
	Value             string  `json:"value"`
	Description       *string `json:"description"`
	Transport         *string `json:"transport"`
	Command           *string `json:"command"`
	URL               *string `json:"url"`
	OAuthCallbackPort *uint16 `json:"oauthCallbackPort"`
}

// SkillPolicy is an agents/openai.yaml policy; Products is never nil.
type SkillPolicy struct {
	AllowImplicitInvocation *bool    `json:"allowImplicitInvocation"`
	Products                []string `json:"products"`
}
