package policy

// Wire types of the sandbox intent (spec/jsonrpc.md §6, spec/sandbox.md §1.2–§1.4).
// Outer context fields are camelCase; everything inside `permissions` is snake_case.
//
//	{"permissions": {"type": "managed", "network": "restricted",
//	   "file_system": {"type": "restricted", "glob_scan_max_depth": 4, "entries": [
//	     {"path": {"type": "special", "value": {"kind": "project_roots", "subpath": ".codex"}},
//	      "access": "read", "missing_path_behavior": "skip"}]}},
//	 "cwd": "file:///srv/work/app", "workspaceRoots": ["file:///srv/work/app"],
//	 "windowsSandboxLevel": "disabled"}

// Access is an entry's access level. Its numeric order is the tie-break strength of
// spec/sandbox.md §2.2: read < write < deny.
type Access uint8

const (
	AccessRead  Access = iota + 1 // "read"
	AccessWrite                   // "write"
	AccessDeny                    // "deny" (input alias "none")
)

func (a Access) String() string {
	switch a {
	case AccessRead:
		return "read"
	case AccessWrite:
		return "write"
	case AccessDeny:
		return "deny"
	}
	return "invalid"
}

// Network is a profile's network mode.
type Network uint8

const (
	NetworkRestricted Network = iota // "restricted"
	NetworkEnabled                   // "enabled"
)

func (n Network) String() string {
	if n == NetworkEnabled {
		return "enabled"
	}
	return "restricted"
}

// ProfileType is the tag of a PermissionProfile.
type ProfileType uint8

const (
	ProfileManaged  ProfileType = iota // the executor builds the sandbox
	ProfileDisabled                    // unrestricted file system, network enabled
	ProfileExternal                    // caller isolated the file system; network applies
)

func (t ProfileType) String() string {
	switch t {
	case ProfileDisabled:
		return "disabled"
	case ProfileExternal:
		return "external"
	}
	return "managed"
}

// PermissionProfile is the `permissions` object.
type PermissionProfile struct {
	Type ProfileType
	// Network applies to managed and external profiles; disabled is always enabled.
	Network Network
	// FileSystem applies to managed profiles only.
	FileSystem FileSystemPermissions
}

// FileSystemPermissions is `file_system`: unrestricted, or restricted with entries.
type FileSystemPermissions struct {
	Restricted bool
	Entries    []Entry
	// GlobScanMaxDepth caps deny-glob expansion depth; 0 means no cap (absent on the
	// wire; 0 itself is a decode error).
	GlobScanMaxDepth int
}

// Entry is one file-system permission entry.
type Entry struct {
	Path   EntryPath
	Access Access
	// SkipIfMissing is missing_path_behavior "skip". At launch it drops a missing write
	// entry; a missing read or deny entry is kept and, below a writable root, masked like
	// any missing carve-out (observed from codex 0.171.0 and 0.169.0; sandbox/doc.go).
	SkipIfMissing bool
}

// PathType is the tag of an EntryPath.
type PathType uint8

const (
	PathLiteral PathType = iota // "path": a PathUri
	PathGlob                    // "glob_pattern"
	PathSpecial                 // "special"
)

// EntryPath is an entry's `path`: exactly one of URI, Pattern or Special is meaningful,
// selected by Type.
type EntryPath struct {
	Type    PathType
	URI     PathURI
	Pattern string
	Special SpecialPath
}

// SpecialKind is the `kind` of a special path.
type SpecialKind uint8

const (
	SpecialRoot         SpecialKind = iota // "/"
	SpecialMinimal                         // platform read roots when readable
	SpecialProjectRoots                    // each workspace root (+ subpath); alias current_working_directory
	SpecialTmpdir                          // $TMPDIR of the launcher environment
	SpecialSlashTmp                        // /tmp if it is a directory
	SpecialUnknown                         // never resolves
)

var specialNames = [...]string{"root", "minimal", "project_roots", "tmpdir", "slash_tmp", "unknown"}

func (k SpecialKind) String() string {
	if int(k) < len(specialNames) {
		return specialNames[k]
	}
	return "invalid"
}

// SpecialPath is the `value` of a special entry path.
type SpecialPath struct {
	Kind SpecialKind
	// Subpath is project_roots' optional relative subpath (HasSubpath false = absent),
	// or unknown's subpath.
	Subpath    string
	HasSubpath bool
	// UnknownPath is unknown's required `path`, kept verbatim.
	UnknownPath string
}

// WindowsSandboxLevel is the required, otherwise ignored, windowsSandboxLevel.
type WindowsSandboxLevel string

// Context is a FileSystemSandboxContext. Decode it with encoding/json; absent and null
// both mean "no sandbox" and are the caller's business (use a *Context field).
type Context struct {
	Permissions                     PermissionProfile
	Cwd                             PathURI // IsZero when absent
	WorkspaceRoots                  []PathURI
	UserHomeDir                     PathURI // IsZero when absent
	TemporaryDirectories            []PathURI
	WindowsSandboxLevel             WindowsSandboxLevel
	WindowsSandboxPrivateDesktop    bool
	WindowsSandboxProxySettingsMode string
	UseLegacyLandlock               bool
}
