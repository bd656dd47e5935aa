package netproxy

// Decoding of process/start's networkProxy member (spec/network-proxy.md §2, §2.1).
//
// The Go declarations below say what the reference's serde declarations say, for
// jsonwire's decoder (typedec.go, structdec.go): a field without omitempty is required, a
// pointer is Option<T>, omitempty is #[serde(default)]. Field order is the reference's
// declaration order, which decides which missing field is reported first and how the
// sequence form [proxy, auditMetadata, …] is read.
//
//	RemoteNetworkProxyLaunchConfig    (object, or a sequence of its 5 fields)
//	├─ proxy                   RemoteNetworkProxyConfig, required, object only
//	├─ auditMetadata           NetworkProxyAuditMetadata, default; null is a type error
//	├─ environmentId           Option<String>, default
//	├─ executionId             Option<String>, default
//	└─ policyDecisionTimeoutMs Option<u64>, default
//
//	RemoteNetworkProxyConfig (object only: the reference buffers it before decoding)
//	├─ enabled, enableSocks5, enableSocks5Udp, allowUpstreamProxy,
//	│  dangerouslyAllowAllUnixSockets             bool, required (missing in this order)
//	├─ mode                    "limited" | "full", required
//	├─ allowLocalBinding       bool, required
//	├─ domains                 Option<map pattern → "allow" | "deny" | "none">
//	├─ unixSockets             Option<NetworkUnixSocketPermissions> (map path → "allow" | "deny")
//	├─ reviewDomains           Vec<String>, default; null is a type error
//	├─ transparentTcp          bool, default (0.171.0; 0.169.0 ignores it)
//	├─ credentialMasking       bool, default
//	└─ credentialProviders     map providerId → provider (credmask.Providers: §9.4 serde texts), default

import (
	"bytes"
	"encoding/json"

	"github.com/execlab/executor/executor/netproxy/credmask"
	"github.com/execlab/executor/jsonwire"
)

// LaunchConfig is the decoded networkProxy member (Rust RemoteNetworkProxyLaunchConfig).
// It is plain data; Check validates it. Never mutated after Decode.
type LaunchConfig struct {
	Proxy         ProxyConfig   `json:"proxy"`
	AuditMetadata AuditMetadata `json:"auditMetadata,omitempty"`
	// EnvironmentID and ExecutionID scope attribution; nil when absent or null.
	EnvironmentID *string `json:"environmentId,omitempty"`
	ExecutionID   *string `json:"executionId,omitempty"`
	// PolicyDecisionTimeoutMs enables network/policyRequest callbacks (§6); nil when
	// absent or null. Zero is refused by Check.
	PolicyDecisionTimeoutMs *uint64 `json:"policyDecisionTimeoutMs,omitempty"`
}

// RustName is the name serde prints in type errors.
func (LaunchConfig) RustName() string { return "RemoteNetworkProxyLaunchConfig" }

// AuditMetadata is controller-side attribution (Rust NetworkProxyAuditMetadata). It is
// decoded and type-checked only: the reference does not echo it (§2).
type AuditMetadata struct {
	ConversationID *string `json:"conversationId"`
	AppVersion     *string `json:"appVersion"`
	UserAccountID  *string `json:"userAccountId"`
	AuthMode       *string `json:"authMode"`
	Originator     *string `json:"originator"`
	UserEmail      *string `json:"userEmail"`
	TerminalType   *string `json:"terminalType"`
	Model          *string `json:"model"`
	Slug           *string `json:"slug"`
}

// RustName is the name serde prints in type errors.
func (AuditMetadata) RustName() string { return "NetworkProxyAuditMetadata" }

// ProxyConfig is the decoded proxy member (Rust RemoteNetworkProxyConfig).
type ProxyConfig struct {
	Enabled                        bool `json:"enabled"`
	EnableSocks5                   bool `json:"enableSocks5"`
	EnableSocks5UDP                bool `json:"enableSocks5Udp"`
	AllowUpstreamProxy             bool `json:"allowUpstreamProxy"`
	DangerouslyAllowAllUnixSockets bool `json:"dangerouslyAllowAllUnixSockets"`
	Mode                           Mode `json:"mode"`
	AllowLocalBinding              bool `json:"allowLocalBinding"`
	// Domains maps a pattern to its permission; nil when absent or null.
	Domains *map[string]Permission `json:"domains,omitempty"`
	// UnixSockets maps an absolute path to its permission; nil when absent or null.
	// Validated, otherwise without effect on Linux (§10).
	UnixSockets       *UnixSockets `json:"unixSockets"`
	ReviewDomains     []string     `json:"reviewDomains,omitempty"`
	TransparentTCP    bool         `json:"transparentTcp,omitempty"`
	CredentialMasking bool         `json:"credentialMasking,omitempty"`
	// CredentialProviders are the custom credential providers (§9.4), decoded in
	// document order with the reference's texts; nil when absent.
	CredentialProviders credmask.Providers `json:"credentialProviders,omitempty"`
}

// RustName is the name serde prints in type errors.
func (ProxyConfig) RustName() string { return "RemoteNetworkProxyConfig" }

// UnmarshalJSON decodes p with jsonwire's serde semantics from an object only: the
// reference buffers the member before decoding it, so unlike other structs it has no
// sequence form ("invalid type: sequence, expected struct RemoteNetworkProxyConfig").
func (p *ProxyConfig) UnmarshalJSON(raw []byte) error {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return jsonwire.InvalidParams("invalid type: %s, expected struct %s", jsonwire.Unexpected(raw), ProxyConfig{}.RustName())
	}
	var inner proxyFields
	if err := jsonwire.UnmarshalParams(raw, &inner); err != nil {
		return err
	}
	*p = ProxyConfig(inner)
	return nil
}

// proxyFields is ProxyConfig without its UnmarshalJSON, for jsonwire's struct decoder.
type proxyFields ProxyConfig

// RustName is the name serde prints in type errors.
func (proxyFields) RustName() string { return "RemoteNetworkProxyConfig" }

// Mode is the proxy mode: limited allows only GET, HEAD and OPTIONS (§5.2 step 6).
type Mode string

// Modes.
const (
	ModeLimited Mode = "limited"
	ModeFull    Mode = "full"
)

// Variants lists the accepted values in the reference's order.
func (Mode) Variants() []string { return []string{string(ModeLimited), string(ModeFull)} }

// Permission is a domain pattern's permission.
type Permission string

// Permissions.
const (
	PermissionNone  Permission = "none"
	PermissionAllow Permission = "allow"
	PermissionDeny  Permission = "deny"
)

// Variants lists the accepted values in the reference's order.
func (Permission) Variants() []string {
	return []string{string(PermissionNone), string(PermissionAllow), string(PermissionDeny)}
}

// UnixSocketPermission is a unix socket path's permission.
type UnixSocketPermission string

// Variants lists the accepted values in the reference's order.
func (UnixSocketPermission) Variants() []string { return []string{"allow", "deny"} }

// UnixSockets is the unixSockets member (Rust NetworkUnixSocketPermissions, a struct
// around a map): an object of path → permission.
type UnixSockets map[string]UnixSocketPermission

// UnmarshalJSON decodes u from an object only, with serde's texts.
func (u *UnixSockets) UnmarshalJSON(raw []byte) error {
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return jsonwire.InvalidParams("invalid type: %s, expected struct NetworkUnixSocketPermissions", jsonwire.Unexpected(raw))
	}
	var m map[string]UnixSocketPermission
	if err := jsonwire.UnmarshalParams(raw, &m); err != nil {
		return err
	}
	*u = m
	return nil
}

// Decode decodes a networkProxy member. It returns (nil, nil) when raw is absent or
// null (no proxy), and otherwise a *jsonwire.Error with CodeInvalidParams and serde's
// bare text on failure. It does not validate: see Check.
func Decode(raw json.RawMessage) (*LaunchConfig, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	c := new(LaunchConfig)
	if err := jsonwire.UnmarshalParams(raw, c); err != nil {
		return nil, err
	}
	return c, nil
}
