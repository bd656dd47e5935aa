package policy

import (
	"encoding/json"
	"fmt"
)

// Policy is a resolved sandbox policy: absolute, lexically clean paths, project roots
// materialized, tmpdir/slash_tmp and globs resolved (spec/sandbox.md §2.1 steps 1–6).
// Anything that depends on the filesystem at launch (skip entries, platform read roots,
// glob expansion, symlinks) is left to package sandbox.
//
// A Policy is immutable after Resolve and safe for concurrent use. Its JSON form is the
// internal stage encoding passed in --permission-profile (both ends are this binary).
type Policy struct {
	// Type is the profile type the policy came from.
	Type ProfileType `json:"type"`
	// Restricted is false when every path is writable (disabled, external, or managed
	// with an unrestricted file system).
	Restricted bool    `json:"restricted"`
	Network    Network `json:"network"`
	// Entries are path entries; root is "/" and minimal is kept in Minimal.
	Entries []ResolvedEntry `json:"entries,omitempty"`
	// Minimal is the strongest access of any `minimal` entry, 0 if there is none.
	Minimal Access `json:"minimal,omitempty"`
	// DenyGlobs are absolute deny patterns (glob syntax, spec/sandbox.md §2.2).
	DenyGlobs []string `json:"denyGlobs,omitempty"`
	// GlobScanMaxDepth caps deny-glob expansion; 0 = no cap.
	GlobScanMaxDepth int `json:"globScanMaxDepth,omitempty"`
	// Cwd is the policy cwd (absolute); anchors relative candidates.
	Cwd string `json:"cwd"`
	// UseLegacyLandlock is the context's useLegacyLandlock flag (spec/sandbox.md §2.10).
	UseLegacyLandlock bool `json:"useLegacyLandlock,omitempty"`
}

// ResolvedEntry is one absolute path entry.
type ResolvedEntry struct {
	Path          string `json:"path"`
	Access        Access `json:"access"`
	SkipIfMissing bool   `json:"skipIfMissing,omitempty"`
}

// MarshalText encodes a as its wire name.
func (a Access) MarshalText() ([]byte, error) {
	if a < AccessRead || a > AccessDeny {
		return nil, fmt.Errorf("encoding access %d: out of range", a)
	}
	return []byte(a.String()), nil
}

// UnmarshalText decodes a wire access name (including the alias "none").
func (a *Access) UnmarshalText(b []byte) error {
	switch string(b) {
	case "read":
		*a = AccessRead
	case "write":
		*a = AccessWrite
	case "deny", "none":
		*a = AccessDeny
	default:
		return unknownVariant(string(b), "read", "write", "deny", "none")
	}
	return nil
}

// MarshalText encodes n as its wire name.
func (n Network) MarshalText() ([]byte, error) { return []byte(n.String()), nil }

// UnmarshalText decodes a wire network name.
func (n *Network) UnmarshalText(b []byte) error {
	switch string(b) {
	case "restricted":
		*n = NetworkRestricted
	case "enabled":
		*n = NetworkEnabled
	default:
		return unknownVariant(string(b), "restricted", "enabled")
	}
	return nil
}

// MarshalText encodes t as its wire tag.
func (t ProfileType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText decodes a wire profile tag.
func (t *ProfileType) UnmarshalText(b []byte) error {
	switch string(b) {
	case "managed":
		*t = ProfileManaged
	case "disabled":
		*t = ProfileDisabled
	case "external":
		*t = ProfileExternal
	default:
		return unknownVariant(string(b), "managed", "disabled", "external")
	}
	return nil
}

// Encode returns the stage encoding of p.
func (p *Policy) Encode() (string, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("encoding policy: %w", err)
	}
	return string(b), nil
}

// DecodePolicy parses the stage encoding produced by Encode and re-validates it: every
// path must be absolute and clean, every access valid.
func DecodePolicy(s string) (*Policy, error) {
	var p Policy
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return nil, fmt.Errorf("decoding policy: %w", err)
	}
	for _, e := range p.Entries {
		if !isCleanAbs(e.Path) {
			return nil, fmt.Errorf("decoding policy: path %q is not absolute and clean", e.Path)
		}
		if e.Access < AccessRead || e.Access > AccessDeny {
			return nil, fmt.Errorf("decoding policy: invalid access for %q", e.Path)
		}
	}
	for _, g := range p.DenyGlobs {
		if len(g) == 0 || g[0] != '/' {
			return nil, fmt.Errorf("decoding policy: glob %q is not absolute", g)
		}
	}
	if p.Minimal > AccessDeny || p.GlobScanMaxDepth < 0 || !isCleanAbs(p.Cwd) {
		return nil, fmt.Errorf("decoding policy: invalid header fields")
	}
	return &p, nil
}
