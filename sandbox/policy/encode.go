package policy

// JSON encoding of the wire types, the inverse of decode.go (used for logging-free
// round trips, test fixtures and the integrator's echo of a context; the field names
// and tags are those of spec/jsonrpc.md §6).

import "encoding/json"

type wireContext struct {
	Permissions                     PermissionProfile `json:"permissions"`
	Cwd                             *PathURI          `json:"cwd,omitempty"`
	WorkspaceRoots                  []PathURI         `json:"workspaceRoots,omitempty"`
	UserHomeDir                     *PathURI          `json:"userHomeDir,omitempty"`
	TemporaryDirectories            []PathURI         `json:"temporaryDirectories,omitempty"`
	WindowsSandboxLevel             string            `json:"windowsSandboxLevel"`
	WindowsSandboxPrivateDesktop    bool              `json:"windowsSandboxPrivateDesktop,omitempty"`
	WindowsSandboxProxySettingsMode string            `json:"windowsSandboxProxySettingsMode,omitempty"`
	UseLegacyLandlock               bool              `json:"useLegacyLandlock,omitempty"`
}

// MarshalJSON encodes c in the wire shape.
func (c *Context) MarshalJSON() ([]byte, error) {
	w := wireContext{
		Permissions:                     c.Permissions,
		WorkspaceRoots:                  c.WorkspaceRoots,
		TemporaryDirectories:            c.TemporaryDirectories,
		WindowsSandboxLevel:             string(c.WindowsSandboxLevel),
		WindowsSandboxPrivateDesktop:    c.WindowsSandboxPrivateDesktop,
		WindowsSandboxProxySettingsMode: c.WindowsSandboxProxySettingsMode,
		UseLegacyLandlock:               c.UseLegacyLandlock,
	}
	if !c.Cwd.IsZero() {
		w.Cwd = &c.Cwd
	}
	if !c.UserHomeDir.IsZero() {
		w.UserHomeDir = &c.UserHomeDir
	}
	return json.Marshal(w)
}

// MarshalJSON encodes p with its "type" tag.
func (p PermissionProfile) MarshalJSON() ([]byte, error) {
	switch p.Type {
	case ProfileDisabled:
		return []byte(`{"type":"disabled"}`), nil
	case ProfileExternal:
		return json.Marshal(struct {
			Type    string  `json:"type"`
			Network Network `json:"network"`
		}{"external", p.Network})
	}
	return json.Marshal(struct {
		Type       string                `json:"type"`
		FileSystem FileSystemPermissions `json:"file_system"`
		Network    Network               `json:"network"`
	}{"managed", p.FileSystem, p.Network})
}

// MarshalJSON encodes fs with its "type" tag.
func (fs FileSystemPermissions) MarshalJSON() ([]byte, error) {
	if !fs.Restricted {
		return []byte(`{"type":"unrestricted"}`), nil
	}
	entries := fs.Entries
	if entries == nil {
		entries = []Entry{}
	}
	return json.Marshal(struct {
		Type             string  `json:"type"`
		Entries          []Entry `json:"entries"`
		GlobScanMaxDepth int     `json:"glob_scan_max_depth,omitempty"`
	}{"restricted", entries, fs.GlobScanMaxDepth})
}

// MarshalJSON encodes e.
func (e Entry) MarshalJSON() ([]byte, error) {
	w := struct {
		Path                EntryPath `json:"path"`
		Access              Access    `json:"access"`
		MissingPathBehavior string    `json:"missing_path_behavior,omitempty"`
	}{Path: e.Path, Access: e.Access}
	if e.SkipIfMissing {
		w.MissingPathBehavior = "skip"
	}
	return json.Marshal(w)
}

// MarshalJSON encodes p with its "type" tag.
func (p EntryPath) MarshalJSON() ([]byte, error) {
	switch p.Type {
	case PathGlob:
		return json.Marshal(struct {
			Type    string `json:"type"`
			Pattern string `json:"pattern"`
		}{"glob_pattern", p.Pattern})
	case PathSpecial:
		return json.Marshal(struct {
			Type  string      `json:"type"`
			Value SpecialPath `json:"value"`
		}{"special", p.Special})
	}
	return json.Marshal(struct {
		Type string  `json:"type"`
		Path PathURI `json:"path"`
	}{"path", p.URI})
}

// MarshalJSON encodes sp with its "kind" tag.
func (sp SpecialPath) MarshalJSON() ([]byte, error) {
	w := struct {
		Kind    string  `json:"kind"`
		Path    *string `json:"path,omitempty"`
		Subpath *string `json:"subpath,omitempty"`
	}{Kind: sp.Kind.String()}
	if sp.Kind == SpecialUnknown {
		w.Path = &sp.UnknownPath
	}
	if sp.HasSubpath {
		w.Subpath = &sp.Subpath
	}
	return json.Marshal(w)
}
