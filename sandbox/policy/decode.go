package policy

// Hand-written decoders that mirror the reference's serde derives, so that decode
// failures carry the same bare texts (spec/jsonrpc.md §1.5, spec/sandbox.md §1.6).
// Unknown members are ignored everywhere. Only what the reference's structs reject is
// rejected; semantic checks that the reference performs later live in Resolve.

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// UnmarshalJSON decodes a FileSystemSandboxContext. A JSON null is a type error here:
// callers model "absent or null" with a nil *Context.
func (c *Context) UnmarshalJSON(data []byte) error {
	fields, err := objectFields(data, "struct FileSystemSandboxContext", true)
	if err != nil {
		return err
	}
	var out Context
	var havePerm, haveLevel bool
	for _, f := range fields {
		switch f.key {
		case "permissions":
			if err := out.Permissions.decode(f.val); err != nil {
				return err
			}
			havePerm = true
		case "cwd":
			if err := decodeOptionalURI(f.val, &out.Cwd); err != nil {
				return err
			}
		case "workspaceRoots":
			if out.WorkspaceRoots, err = decodeURIList(f.val, false); err != nil {
				return err
			}
		case "userHomeDir":
			if err := decodeOptionalURI(f.val, &out.UserHomeDir); err != nil {
				return err
			}
		case "temporaryDirectories":
			if out.TemporaryDirectories, err = decodeURIList(f.val, true); err != nil {
				return err
			}
		case "windowsSandboxLevel":
			s, err := decodeVariant(f.val, "WindowsSandboxLevel", "disabled", "restricted-token", "elevated", "mxc")
			if err != nil {
				return err
			}
			out.WindowsSandboxLevel = WindowsSandboxLevel(s)
			haveLevel = true
		case "windowsSandboxPrivateDesktop":
			if out.WindowsSandboxPrivateDesktop, err = decodeBool(f.val); err != nil {
				return err
			}
		case "windowsSandboxProxySettingsMode":
			if isNull(f.val) {
				out.WindowsSandboxProxySettingsMode = ""
				continue
			}
			if out.WindowsSandboxProxySettingsMode, err = decodeVariant(f.val,
				"WindowsSandboxProxySettingsMode", "reconcile", "preserve"); err != nil {
				return err
			}
		case "useLegacyLandlock":
			if out.UseLegacyLandlock, err = decodeBool(f.val); err != nil {
				return err
			}
		}
	}
	if !havePerm {
		return missingField("permissions")
	}
	if !haveLevel {
		return missingField("windowsSandboxLevel")
	}
	*c = out
	return nil
}

func decodeOptionalURI(raw json.RawMessage, dst *PathURI) *Error {
	if isNull(raw) {
		*dst = ""
		return nil
	}
	s, err := decodeString(raw)
	if err != nil {
		return err
	}
	u, err := parsePathURI(s)
	if err != nil {
		return err
	}
	*dst = u
	return nil
}

func decodeURIList(raw json.RawMessage, nullable bool) ([]PathURI, *Error) {
	if nullable && isNull(raw) {
		return nil, nil
	}
	items, err := decodeSequence(raw)
	if err != nil {
		return nil, err
	}
	out := make([]PathURI, 0, len(items))
	for _, it := range items {
		s, err := decodeString(it)
		if err != nil {
			return nil, err
		}
		u, err := parsePathURI(s)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// UnmarshalJSON decodes a PermissionProfile (internally tagged by "type").
func (p *PermissionProfile) UnmarshalJSON(data []byte) error {
	if err := p.decode(data); err != nil {
		return err
	}
	return nil
}

func (p *PermissionProfile) decode(data []byte) *Error {
	fields, err := objectFields(data, "internally tagged enum PermissionProfile", false)
	if err != nil {
		return err
	}
	tag, err := decodeTag(fields, "type", "managed", "disabled", "external")
	if err != nil {
		return err
	}
	var out PermissionProfile
	switch tag {
	case "disabled":
		out = PermissionProfile{Type: ProfileDisabled, Network: NetworkEnabled}
	case "external":
		out.Type = ProfileExternal
		raw, ok := lookup(fields, "network")
		if !ok {
			return missingField("network")
		}
		if out.Network, err = decodeNetwork(raw); err != nil {
			return err
		}
	case "managed":
		out.Type = ProfileManaged
		var haveFS, haveNet bool
		for _, f := range fields {
			switch f.key {
			case "file_system":
				if err := out.FileSystem.decode(f.val); err != nil {
					return err
				}
				haveFS = true
			case "network":
				if out.Network, err = decodeNetwork(f.val); err != nil {
					return err
				}
				haveNet = true
			}
		}
		if !haveFS {
			return missingField("file_system")
		}
		if !haveNet {
			return missingField("network")
		}
	}
	*p = out
	return nil
}

func decodeNetwork(raw json.RawMessage) (Network, *Error) {
	s, err := decodeVariant(raw, "NetworkSandboxPolicy", "restricted", "enabled")
	if err != nil {
		return 0, err
	}
	if s == "enabled" {
		return NetworkEnabled, nil
	}
	return NetworkRestricted, nil
}

func (fs *FileSystemPermissions) decode(data []byte) *Error {
	fields, err := objectFields(data, "internally tagged enum FileSystemSandboxPolicy", false)
	if err != nil {
		return err
	}
	tag, err := decodeTag(fields, "type", "unrestricted", "restricted")
	if err != nil {
		return err
	}
	out := FileSystemPermissions{Restricted: tag == "restricted"}
	if !out.Restricted {
		*fs = out
		return nil
	}
	for _, f := range fields {
		switch f.key {
		case "entries":
			items, err := decodeSequence(f.val)
			if err != nil {
				return err
			}
			out.Entries = make([]Entry, 0, len(items))
			for _, it := range items {
				var e Entry
				if err := e.decode(it); err != nil {
					return err
				}
				out.Entries = append(out.Entries, e)
			}
		case "glob_scan_max_depth":
			if isNull(f.val) {
				out.GlobScanMaxDepth = 0
				continue
			}
			n, err := decodeNonZeroUsize(f.val)
			if err != nil {
				return err
			}
			out.GlobScanMaxDepth = n
		}
	}
	*fs = out
	return nil
}

func decodeNonZeroUsize(raw json.RawMessage) (int, *Error) {
	raw = bytes.TrimSpace(raw)
	const exp = "a nonzero usize"
	if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		return 0, invalidType(raw, exp)
	}
	if n, err := strconv.ParseUint(string(raw), 10, 64); err == nil {
		if n == 0 {
			return 0, invalidParams("invalid value: integer `0`, expected %s", exp)
		}
		const maxInt = int(^uint(0) >> 1)
		if n > uint64(maxInt) {
			return maxInt, nil
		}
		return int(n), nil
	}
	if _, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return 0, invalidParams("invalid value: integer `%s`, expected %s", raw, exp)
	}
	return 0, invalidParams("invalid type: %s, expected %s", describeNumber(raw), exp)
}

func (e *Entry) decode(data []byte) *Error {
	fields, err := objectFields(data, "struct FileSystemSandboxEntry", true)
	if err != nil {
		return err
	}
	var out Entry
	var havePath, haveAccess bool
	for _, f := range fields {
		switch f.key {
		case "path":
			if err := out.Path.decode(f.val); err != nil {
				return err
			}
			havePath = true
		case "access":
			s, err := decodeVariant(f.val, "FileSystemAccessMode", "read", "write", "deny", "none")
			if err != nil {
				return err
			}
			switch s {
			case "read":
				out.Access = AccessRead
			case "write":
				out.Access = AccessWrite
			default:
				out.Access = AccessDeny
			}
			haveAccess = true
		case "missing_path_behavior":
			if isNull(f.val) {
				out.SkipIfMissing = false
				continue
			}
			if _, err := decodeVariant(f.val, "MissingPathBehavior", "skip"); err != nil {
				return err
			}
			out.SkipIfMissing = true
		}
	}
	if !havePath {
		return missingField("path")
	}
	if !haveAccess {
		return missingField("access")
	}
	if out.Path.Type == PathSpecial && out.Path.Special.Kind == SpecialUnknown && out.Access == AccessDeny {
		return errUnknownDeny
	}
	*e = out
	return nil
}

func (p *EntryPath) decode(data []byte) *Error {
	fields, err := objectFields(data, "internally tagged enum FileSystemPath", false)
	if err != nil {
		return err
	}
	tag, err := decodeTag(fields, "type", "path", "glob_pattern", "special")
	if err != nil {
		return err
	}
	var out EntryPath
	switch tag {
	case "path":
		out.Type = PathLiteral
		raw, ok := lookup(fields, "path")
		if !ok {
			return missingField("path")
		}
		s, err := decodeString(raw)
		if err != nil {
			return err
		}
		if out.URI, err = parsePathURI(s); err != nil {
			return err
		}
	case "glob_pattern":
		out.Type = PathGlob
		raw, ok := lookup(fields, "pattern")
		if !ok {
			return missingField("pattern")
		}
		if out.Pattern, err = decodeString(raw); err != nil {
			return err
		}
	case "special":
		out.Type = PathSpecial
		raw, ok := lookup(fields, "value")
		if !ok {
			return missingField("value")
		}
		if err := out.Special.decode(raw); err != nil {
			return err
		}
	}
	*p = out
	return nil
}

func (sp *SpecialPath) decode(data []byte) *Error {
	fields, err := objectFields(data, "internally tagged enum FileSystemSpecialPath", false)
	if err != nil {
		return err
	}
	tag, err := decodeTag(fields, "kind", "root", "minimal", "current_working_directory",
		"project_roots", "tmpdir", "slash_tmp", "unknown")
	if err != nil {
		return err
	}
	var out SpecialPath
	switch tag {
	case "root":
		out.Kind = SpecialRoot
	case "minimal":
		out.Kind = SpecialMinimal
	case "tmpdir":
		out.Kind = SpecialTmpdir
	case "slash_tmp":
		out.Kind = SpecialSlashTmp
	case "project_roots", "current_working_directory", "unknown":
		out.Kind = SpecialProjectRoots
		if tag == "unknown" {
			out.Kind = SpecialUnknown
			raw, ok := lookup(fields, "path")
			if !ok {
				return missingField("path")
			}
			if out.UnknownPath, err = decodeString(raw); err != nil {
				return err
			}
		}
		if raw, ok := lookup(fields, "subpath"); ok && !isNull(raw) {
			if out.Subpath, err = decodeString(raw); err != nil {
				return err
			}
			out.HasSubpath = true
		}
	}
	*sp = out
	return nil
}
