package policy

// Resolution of a decoded Context into a Policy (spec/sandbox.md §2.1 executor steps).
// Pure: the only "filesystem" inputs are the values in ResolveOptions.

import (
	"path"
	"strings"
)

// Purpose selects the per-method rules of spec/sandbox.md §2.1 step 2 and §2.3.
type Purpose uint8

const (
	// ForProcess: process/start. An absent sandbox.cwd becomes the command cwd.
	ForProcess Purpose = iota
	// ForFileSystem: fs/*. An absent sandbox.cwd becomes the executor cwd unless an
	// entry depends on it (then -32602).
	ForFileSystem
)

// ResolveOptions are the request-independent inputs of Resolve. Nil-safe fields only;
// the struct is never mutated.
type ResolveOptions struct {
	Purpose Purpose
	// CommandCwd is the native, absolute process/start cwd (ForProcess).
	CommandCwd string
	// ExecutorCwd is the executor's own cwd (ForFileSystem).
	ExecutorCwd string
	// Home anchors "~/" globs when the context has no userHomeDir (executor HOME).
	Home string
	// TmpDir is TMPDIR of the launcher environment: the request env for process/start,
	// the executor's own for fs/*. Used only when non-empty and absolute.
	TmpDir string
	// RuntimeReadGrants are added as read entries unless already readable (the
	// canonical executor binary the sandbox re-enters; spec/sandbox.md §2.1 step 5).
	RuntimeReadGrants []string
	// TopLevelAlias, if non-nil, returns the target of a symlinked first path component
	// ("/lib" -> "/usr/lib") so entries compare in one namespace (§2.1 step 6).
	TopLevelAlias func(first string) (target string, ok bool)
}

// Resolve validates c and resolves it into a Policy. Errors are *Error with the wire
// code and text (spec/sandbox.md §1.6). For ForFileSystem, paths that do not convert
// are left out of the policy and reported only by ResolveFS.
func Resolve(c *Context, opts *ResolveOptions) (*Policy, error) {
	p, _, err := resolve(c, opts)
	return p, err
}

// ResolveFS resolves the sandbox context of an fs/* operation (opts.Purpose must be
// ForFileSystem) and returns the policy its helper must enforce, or nil when the
// operation runs in-process (Policy.NeedsFSHelper). A path that does not convert fails
// only in the first case, as in the reference: -32600 "invalid sandbox permission path
// URI: …", then the bare cwd error, then "invalid sandbox workspace root: …" (codex
// 0.171.0; 0.169.0 said "file system sandbox workspace root is not native to this
// exec-server host: …").
func ResolveFS(c *Context, opts *ResolveOptions, readOnlyOp bool) (*Policy, error) {
	p, pe, err := resolve(c, opts)
	if err != nil {
		return nil, err
	}
	q := *p // entries whose path did not convert still make a profile less than full
	q.Entries = append(append([]ResolvedEntry(nil), p.Entries...), pe.unconverted...)
	if !q.NeedsFSHelper(readOnlyOp) {
		return nil, nil
	}
	for _, e := range []*Error{pe.perm, pe.cwd, pe.root} {
		if e != nil {
			return nil, e
		}
	}
	return p, nil
}

func resolve(c *Context, opts *ResolveOptions) (*Policy, *pathErrors, error) {
	if opts == nil {
		opts = &ResolveOptions{}
	}
	if c.WindowsSandboxLevel == "mxc" {
		return nil, nil, errMXC
	}
	prof := c.Permissions
	p := &Policy{Type: prof.Type, Network: prof.Network, UseLegacyLandlock: c.UseLegacyLandlock}
	if prof.Type == ProfileDisabled {
		p.Network = NetworkEnabled
	}

	// Step 1: PathUri conversion. A foreign path fails the request even when the entry
	// would not be used, with the texts and in the order the reference checks them
	// (observed from codex 0.169.0 and 0.171.0): process/start converts the policy cwd,
	// then the workspace roots, then permission paths, each failure at once (-32602
	// "failed to prepare process sandbox: …"); fs/* collects them and reports them only
	// when the operation needs the helper (ResolveFS, -32600). userHomeDir and
	// temporaryDirectories that do not convert are ignored by both.
	pe := &pathErrors{deferred: opts.Purpose == ForFileSystem}
	home := opts.Home
	if !c.UserHomeDir.IsZero() {
		if n, err := c.UserHomeDir.Native(); err == nil {
			home = n
		}
	}

	// Step 2: policy cwd.
	needsCwd := false
	if prof.Type == ProfileManaged && prof.FileSystem.Restricted {
		for _, e := range prof.FileSystem.Entries {
			if e.Path.Type == PathSpecial && e.Path.Special.Kind == SpecialProjectRoots ||
				e.Path.Type == PathGlob && e.Access == AccessDeny && globIsRelative(e.Path.Pattern) {
				needsCwd = true
			}
		}
	}
	switch {
	case !c.Cwd.IsZero():
		n, err := c.Cwd.Native()
		if err != nil {
			if err := pe.fail(&pe.cwd, cwdError(opts.Purpose, err)); err != nil {
				return nil, nil, err
			}
			n = "/"
		}
		p.Cwd = n
	case opts.Purpose == ForFileSystem && needsCwd:
		return nil, nil, errDynamicNeedsCwd
	case opts.Purpose == ForFileSystem:
		p.Cwd = opts.ExecutorCwd
	default:
		p.Cwd = opts.CommandCwd
	}
	var roots []string
	for _, u := range c.WorkspaceRoots {
		n, err := u.Native()
		if err != nil {
			if err := pe.fail(&pe.root, rootError(opts.Purpose, err)); err != nil {
				return nil, nil, err
			}
			continue
		}
		roots = append(roots, n)
	}
	toNative := func(u PathURI) (string, bool, error) {
		n, err := u.Native()
		if err != nil {
			return "", false, pe.fail(&pe.perm, permPathError(opts.Purpose, err))
		}
		return n, true, nil
	}
	if !strings.HasPrefix(p.Cwd, "/") {
		p.Cwd = "/" + p.Cwd
	}
	p.Cwd = path.Clean(p.Cwd)

	if prof.Type != ProfileManaged || !prof.FileSystem.Restricted {
		return p, pe, nil
	}
	p.Restricted = true
	p.GlobScanMaxDepth = prof.FileSystem.GlobScanMaxDepth

	add := func(pth string, a Access, skip bool) {
		p.Entries = append(p.Entries, ResolvedEntry{Path: cleanAbs(pth), Access: a, SkipIfMissing: skip})
	}
	for _, e := range prof.FileSystem.Entries {
		switch e.Path.Type {
		case PathLiteral:
			n, ok, err := toNative(e.Path.URI)
			if err != nil {
				return nil, nil, err
			}
			if !ok {
				// Still counts when ResolveFS decides whether the helper runs.
				pe.unconverted = append(pe.unconverted, ResolvedEntry{Path: unconvertedPath, Access: e.Access})
				continue
			}
			add(n, e.Access, e.SkipIfMissing)
		case PathGlob:
			if e.Access != AccessDeny {
				continue // accepted, grants nothing (observed from codex 0.169.0)
			}
			pats, err := resolveGlob(e.Path.Pattern, p.Cwd, home, roots)
			if err != nil {
				return nil, nil, err
			}
			p.DenyGlobs = append(p.DenyGlobs, pats...)
		case PathSpecial:
			sp := e.Path.Special
			switch sp.Kind {
			case SpecialRoot:
				add("/", e.Access, e.SkipIfMissing)
			case SpecialMinimal:
				p.Minimal = max(p.Minimal, e.Access)
			case SpecialProjectRoots:
				sub, ok := cleanSubpath(sp.Subpath)
				for _, r := range roots {
					switch {
					case ok:
						add(path.Join(r, sub), e.Access, e.SkipIfMissing)
					case e.Access == AccessWrite:
						// dropped (observed from codex 0.169.0)
					default:
						add(r, AccessDeny, false) // fail closed on the whole root
					}
				}
			case SpecialTmpdir:
				if t := opts.TmpDir; t != "" && strings.HasPrefix(t, "/") {
					add(t, e.Access, e.SkipIfMissing)
				}
			case SpecialSlashTmp:
				// "/tmp if it is a directory": the launcher drops it when missing.
				add("/tmp", e.Access, true)
			case SpecialUnknown:
				// Never resolves; read/write narrow access by being ignored, deny was
				// rejected while decoding.
			}
		}
		if len(p.Entries) > maxEntries || len(p.DenyGlobs) > maxEntries {
			return nil, nil, prepareError("too many sandbox permission entries (limit %d)", maxEntries)
		}
	}

	// The fs helper always reads the platform roots (/bin, /usr, /etc, …), as if the
	// profile had `minimal: read` (observed from codex 0.169.0 and 0.171.0: under a
	// profile with only project_roots:write, fs/readFile /etc/hostname and fs/getMetadata
	// /usr/bin/env succeed, /opt and /var stay hidden).
	if opts.Purpose == ForFileSystem && p.Minimal == 0 {
		p.Minimal = AccessRead
	}

	// Step 5: runtime grants.
	for _, g := range opts.RuntimeReadGrants {
		g = cleanAbs(g)
		if a := p.entryAccess(g); a != AccessRead && a != AccessWrite {
			add(g, AccessRead, false)
		}
	}

	// Step 6: top-level aliases.
	if opts.TopLevelAlias != nil {
		for i := range p.Entries {
			p.Entries[i].Path = rewriteAlias(p.Entries[i].Path, opts.TopLevelAlias)
		}
		for i, g := range p.DenyGlobs {
			p.DenyGlobs[i] = rewriteAlias(g, opts.TopLevelAlias)
		}
	}
	return p, pe, nil
}

// cleanSubpath normalizes a project_roots subpath; ok is false for an absolute path or
// one with a "." or ".." component (spec/sandbox.md §1.6).
func cleanSubpath(s string) (string, bool) {
	if strings.HasPrefix(s, "/") {
		return "", false
	}
	var parts []string
	for _, seg := range strings.Split(s, "/") {
		switch seg {
		case "":
			continue
		case ".", "..":
			return "", false
		}
		parts = append(parts, seg)
	}
	return strings.Join(parts, "/"), true
}

func globIsRelative(pat string) bool {
	return !strings.HasPrefix(pat, "/") && !strings.HasPrefix(pat, "~/") &&
		!strings.HasPrefix(pat, projectRootsGlobPrefix)
}

// resolveGlob turns a pattern into absolute patterns (spec/sandbox.md §1.4).
func resolveGlob(pat, cwd, home string, roots []string) ([]string, error) {
	if len(pat) > maxGlobLen {
		return nil, prepareError("glob pattern longer than %d bytes", maxGlobLen)
	}
	switch {
	case strings.HasPrefix(pat, "/"):
		return []string{pat}, nil
	case strings.HasPrefix(pat, projectRootsGlobPrefix):
		sub := strings.TrimLeft(strings.TrimPrefix(pat, projectRootsGlobPrefix), "/")
		out := make([]string, 0, len(roots))
		for _, r := range roots {
			out = append(out, escapeGlob(r)+"/"+sub)
		}
		return out, nil
	case strings.HasPrefix(pat, "~/"):
		if !strings.HasPrefix(home, "/") {
			return nil, prepareError("cannot resolve glob `%s` without a home directory", pat)
		}
		return []string{escapeGlob(cleanAbs(home)) + "/" + pat[2:]}, nil
	default:
		return []string{escapeGlob(cwd) + "/" + strings.TrimPrefix(pat, "./")}, nil
	}
}

// escapeGlob quotes glob metacharacters in a literal path prefix.
func escapeGlob(s string) string {
	if !strings.ContainsAny(s, `*?[\`) {
		return strings.TrimSuffix(s, "/")
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return strings.TrimSuffix(b.String(), "/")
}

func rewriteAlias(p string, alias func(string) (string, bool)) string {
	if p == "/" || !strings.HasPrefix(p, "/") {
		return p
	}
	first, rest, _ := strings.Cut(p[1:], "/")
	if strings.ContainsAny(first, `*?[\`) {
		return p
	}
	target, ok := alias("/" + first)
	if !ok || !strings.HasPrefix(target, "/") {
		return p
	}
	if rest == "" {
		return cleanAbs(target)
	}
	return cleanAbs(target + "/" + rest)
}

// cleanAbs lexically cleans p into an absolute path.
func cleanAbs(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return path.Clean(p)
}

func isCleanAbs(p string) bool { return strings.HasPrefix(p, "/") && path.Clean(p) == p }

// pathErrors records the first PathUri conversion failure of each kind. In deferred
// mode (fs/*) fail records and resolution goes on without the path; otherwise fail
// returns the error for the caller to return at once.
type pathErrors struct {
	deferred        bool
	perm, cwd, root *Error
	// unconverted are the entries left out for a path that did not convert, at
	// unconvertedPath, for ResolveFS's helper decision only.
	unconverted []ResolvedEntry
}

// unconvertedPath stands for an entry path that did not convert; it names nothing.
const unconvertedPath = "/\x00unconverted"

func (pe *pathErrors) fail(slot **Error, e *Error) error {
	if !pe.deferred {
		return e
	}
	if *slot == nil {
		*slot = e
	}
	return nil
}

// cwdError: process/start "failed to prepare process sandbox: invalid sandbox policy
// cwd: …"; fs/* the bare conversion text with -32600.
func cwdError(purpose Purpose, err error) *Error {
	if purpose == ForFileSystem {
		return &Error{Code: CodeInvalidRequest, Message: err.Error()}
	}
	return prepareError("invalid sandbox policy cwd: %s", err.Error())
}

// rootError: "invalid sandbox workspace root: …" (process/start with the prepare
// prefix; fs/* -32600 without it, codex 0.171.0).
func rootError(purpose Purpose, err error) *Error {
	if purpose == ForFileSystem {
		return &Error{Code: CodeInvalidRequest, Message: "invalid sandbox workspace root: " + err.Error()}
	}
	return prepareError("invalid sandbox workspace root: %s", err.Error())
}

// permPathError: process/start "…: invalid sandbox permission path: …"; fs/* -32600
// "invalid sandbox permission path URI: …".
func permPathError(purpose Purpose, err error) *Error {
	if purpose == ForFileSystem {
		return &Error{Code: CodeInvalidRequest, Message: "invalid sandbox permission path URI: " + err.Error()}
	}
	return prepareError("invalid sandbox permission path: %s", err.Error())
}
