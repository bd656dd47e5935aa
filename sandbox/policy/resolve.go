package policy

// Resolution of a decoded Context into a Policy (spec/sandbox.md §2.1 executor steps).
// Pure: the only "filesystem" inputs are the values in ResolveOptions.

import (
	"path"
	"strings"

	"github.com/execlab/executor/jsonwire"
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
	r := &resolver{c: c, opts: opts, pe: &pathErrors{deferred: opts.Purpose == ForFileSystem},
		p: &Policy{Type: prof.Type, Network: prof.Network, UseLegacyLandlock: c.UseLegacyLandlock}}
	if prof.Type == ProfileDisabled {
		r.p.Network = NetworkEnabled
	}
	// Steps 1–2: PathUri conversion and the policy cwd. A foreign path fails the request
	// even when the entry would not be used, with the texts and in the order the
	// reference checks them (observed from codex 0.169.0 and 0.171.0): process/start
	// converts the policy cwd, then the workspace roots, then permission paths, each
	// failure at once (-32602 "failed to prepare process sandbox: …"); fs/* collects
	// them and reports them only when the operation needs the helper (ResolveFS,
	// -32600). userHomeDir and temporaryDirectories that do not convert are ignored.
	r.home = opts.Home
	if !c.UserHomeDir.IsZero() {
		if n, err := c.UserHomeDir.Native(); err == nil {
			r.home = n
		}
	}
	if err := r.policyCwd(); err != nil {
		return nil, nil, err
	}
	if err := r.workspaceRoots(); err != nil {
		return nil, nil, err
	}
	if prof.Type != ProfileManaged || !prof.FileSystem.Restricted {
		return r.p, r.pe, nil
	}
	r.p.Restricted = true
	r.p.GlobScanMaxDepth = prof.FileSystem.GlobScanMaxDepth
	for _, e := range prof.FileSystem.Entries {
		if err := r.entry(e); err != nil {
			return nil, nil, err
		}
		if len(r.p.Entries) > maxEntries || len(r.p.DenyGlobs) > maxEntries {
			return nil, nil, prepareError("too many sandbox permission entries (limit %d)", maxEntries)
		}
	}
	// The fs helper always reads the platform roots (/bin, /usr, /etc, …), as if the
	// profile had `minimal: read` (observed from codex 0.169.0 and 0.171.0: under a
	// profile with only project_roots:write, fs/readFile /etc/hostname and fs/getMetadata
	// /usr/bin/env succeed, /opt and /var stay hidden).
	if opts.Purpose == ForFileSystem && r.p.Minimal == 0 {
		r.p.Minimal = AccessRead
	}
	r.runtimeGrants()
	r.topLevelAliases()
	return r.p, r.pe, nil
}

// resolver holds one resolution's inputs and the policy being built.
type resolver struct {
	c     *Context
	opts  *ResolveOptions
	p     *Policy
	pe    *pathErrors
	home  string   // native home for "~/" globs
	roots []string // native workspace roots that converted
}

// policyCwd is step 2: the context's cwd, else the executor's (fs/*) or the command's
// (process/start); fs/* entries that depend on it need an explicit one.
func (r *resolver) policyCwd() error {
	needsCwd := false
	if fsys := r.c.Permissions.FileSystem; r.c.Permissions.Type == ProfileManaged && fsys.Restricted {
		for _, e := range fsys.Entries {
			if e.Path.Type == PathSpecial && e.Path.Special.Kind == SpecialProjectRoots ||
				e.Path.Type == PathGlob && e.Access == AccessDeny && globIsRelative(e.Path.Pattern) {
				needsCwd = true
			}
		}
	}
	switch {
	case !r.c.Cwd.IsZero():
		n, err := r.c.Cwd.Native()
		if err != nil {
			if err := r.pe.fail(&r.pe.cwd, cwdError(r.opts.Purpose, err)); err != nil {
				return err
			}
			n = "/"
		}
		r.p.Cwd = n
	case r.opts.Purpose == ForFileSystem && needsCwd:
		return errDynamicNeedsCwd
	case r.opts.Purpose == ForFileSystem:
		r.p.Cwd = r.opts.ExecutorCwd
	default:
		r.p.Cwd = r.opts.CommandCwd
	}
	if !strings.HasPrefix(r.p.Cwd, "/") {
		r.p.Cwd = "/" + r.p.Cwd
	}
	r.p.Cwd = path.Clean(r.p.Cwd)
	return nil
}

func (r *resolver) workspaceRoots() error {
	for _, u := range r.c.WorkspaceRoots {
		n, err := u.Native()
		if err != nil {
			if err := r.pe.fail(&r.pe.root, rootError(r.opts.Purpose, err)); err != nil {
				return err
			}
			continue
		}
		r.roots = append(r.roots, n)
	}
	return nil
}

func (r *resolver) add(pth string, a Access, skip bool) {
	r.p.Entries = append(r.p.Entries, ResolvedEntry{Path: cleanAbs(pth), Access: a, SkipIfMissing: skip})
}

// entry is step 4 for one permission entry.
func (r *resolver) entry(e Entry) error {
	switch e.Path.Type {
	case PathLiteral:
		n, err := e.Path.URI.Native()
		if err != nil {
			if err := r.pe.fail(&r.pe.perm, permPathError(r.opts.Purpose, err)); err != nil {
				return err
			}
			// Still counts when ResolveFS decides whether the helper runs.
			r.pe.unconverted = append(r.pe.unconverted, ResolvedEntry{Path: unconvertedPath, Access: e.Access})
			return nil
		}
		r.add(n, e.Access, e.SkipIfMissing)
	case PathGlob:
		if e.Access != AccessDeny {
			return nil // accepted, grants nothing (observed from codex 0.169.0)
		}
		pats, err := resolveGlob(e.Path.Pattern, r.p.Cwd, r.home, r.roots)
		if err != nil {
			return err
		}
		r.p.DenyGlobs = append(r.p.DenyGlobs, pats...)
	case PathSpecial:
		r.special(e)
	}
	return nil
}

func (r *resolver) special(e Entry) {
	sp := e.Path.Special
	switch sp.Kind {
	case SpecialRoot:
		r.add("/", e.Access, e.SkipIfMissing)
	case SpecialMinimal:
		r.p.Minimal = max(r.p.Minimal, e.Access)
	case SpecialProjectRoots:
		sub, ok := cleanSubpath(sp.Subpath)
		for _, root := range r.roots {
			switch {
			case ok:
				r.add(path.Join(root, sub), e.Access, e.SkipIfMissing)
			case e.Access == AccessWrite:
				// dropped (observed from codex 0.169.0)
			default:
				r.add(root, AccessDeny, false) // fail closed on the whole root
			}
		}
	case SpecialTmpdir:
		if t := r.opts.TmpDir; t != "" && strings.HasPrefix(t, "/") {
			r.add(t, e.Access, e.SkipIfMissing)
		}
	case SpecialSlashTmp:
		// "/tmp if it is a directory": the launcher drops it when missing.
		r.add("/tmp", e.Access, true)
	case SpecialUnknown:
		// Never resolves; read/write narrow access by being ignored, deny was
		// rejected while decoding.
	}
}

// runtimeGrants is step 5: read entries for the runtime's own files unless readable.
func (r *resolver) runtimeGrants() {
	for _, g := range r.opts.RuntimeReadGrants {
		g = cleanAbs(g)
		if a := r.p.entryAccess(g); a != AccessRead && a != AccessWrite {
			r.add(g, AccessRead, false)
		}
	}
}

// topLevelAliases is step 6: entries and globs in the namespace of aliased first
// components ("/lib" -> "/usr/lib").
func (r *resolver) topLevelAliases() {
	if r.opts.TopLevelAlias == nil {
		return
	}
	for i := range r.p.Entries {
		r.p.Entries[i].Path = rewriteAlias(r.p.Entries[i].Path, r.opts.TopLevelAlias)
	}
	for i, g := range r.p.DenyGlobs {
		r.p.DenyGlobs[i] = rewriteAlias(g, r.opts.TopLevelAlias)
	}
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
		return &Error{Code: jsonwire.CodeInvalidRequest, Message: err.Error()}
	}
	return prepareError("invalid sandbox policy cwd: %s", err.Error())
}

// rootError: "invalid sandbox workspace root: …" (process/start with the prepare
// prefix; fs/* -32600 without it, codex 0.171.0).
func rootError(purpose Purpose, err error) *Error {
	if purpose == ForFileSystem {
		return &Error{Code: jsonwire.CodeInvalidRequest, Message: "invalid sandbox workspace root: " + err.Error()}
	}
	return prepareError("invalid sandbox workspace root: %s", err.Error())
}

// permPathError: process/start "…: invalid sandbox permission path: …"; fs/* -32600
// "invalid sandbox permission path URI: …".
func permPathError(purpose Purpose, err error) *Error {
	if purpose == ForFileSystem {
		return &Error{Code: jsonwire.CodeInvalidRequest, Message: "invalid sandbox permission path URI: " + err.Error()}
	}
	return prepareError("invalid sandbox permission path: %s", err.Error())
}
