package envconfig

// Project trust (READ: codex-config project_trust_context; PROBED on 0.171.0): a
// project directory's layer loads only when the first trust entry found for it, in
// this order, says "trusted":
//
//  1. the directory itself ([projects."<dir>"], canonical path first, then as given);
//  2. the project root (the nearest ancestor of cwd holding a root marker, else cwd);
//  3. the repository root for trust (a linked worktree's main checkout).
//
// So an "untrusted" subdirectory stays out under a trusted root, and a trusted
// subdirectory loads under an untrusted root.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

type trustContext struct {
	projectRoot string
	// checkoutRoot is the nearest ancestor of cwd with a .git; repoRoot the main
	// checkout for trust (differs from checkoutRoot in a linked worktree). "" outside a
	// repository.
	checkoutRoot, repoRoot string
	levels                 map[string]string // [projects."<key>"] trust_level
	rootKeys               []string
	repoKeys               []string
}

func newTrustContext(discovery *Table, cwd string, markers []string) (*trustContext, error) {
	tc := &trustContext{levels: map[string]string{}}
	if err := tc.readLevels(discovery); err != nil {
		return nil, err
	}
	tc.projectRoot = findProjectRoot(cwd, markers)
	tc.rootKeys = trustKeys(tc.projectRoot)
	tc.checkoutRoot, tc.repoRoot = gitRoots(cwd)
	if tc.repoRoot != "" {
		tc.repoKeys = trustKeys(tc.repoRoot)
	}
	return tc, nil
}

// readLevels reads [projects."<key>"] trust_level with serde's texts for bad shapes
// (PROBED: "invalid type: integer `2`, expected struct ProjectConfig\nin
// `projects./y`\n", "unknown variant `Trusted`, expected `trusted` or `untrusted`\nin
// `projects./x.trust_level`\n").
func (tc *trustContext) readLevels(discovery *Table) error {
	v := discovery.Get("projects")
	if v == nil {
		return nil
	}
	if v.Kind != TableKind {
		return loadErrorf("invalid type: %s, expected a map\nin `projects`\n", unexpected(v))
	}
	for _, k := range v.Tab.Keys() {
		p := v.Tab.Get(k)
		if p.Kind != TableKind {
			return loadErrorf("invalid type: %s, expected struct ProjectConfig\nin `projects.%s`\n", unexpected(p), k)
		}
		lv := p.Tab.Get("trust_level")
		switch {
		case lv == nil:
			continue
		case lv.Kind != String:
			return loadErrorf("invalid type: unit variant, expected string only\nin `projects.%s.trust_level`\n", k)
		case lv.Str != TrustedLevel && lv.Str != UntrustedLevel:
			return loadErrorf("unknown variant `%s`, expected `%s` or `%s`\nin `projects.%s.trust_level`\n", lv.Str, TrustedLevel, UntrustedLevel, k)
		}
		tc.levels[k] = lv.Str
	}
	return nil
}

// unexpected names v as serde's Unexpected does in "invalid type: …" texts.
func unexpected(v *Value) string {
	switch v.Kind {
	case String:
		return "string " + strconv.Quote(v.Str)
	case Integer:
		return "integer `" + strconv.FormatInt(v.Int, 10) + "`"
	case Float:
		return "floating point `" + formatFloat(v.Num) + "`"
	case Boolean:
		return "boolean `" + strconv.FormatBool(v.Bool) + "`"
	case Array:
		return "sequence"
	}
	return "map"
}

// trustKeys are the lookup keys of a path: canonical first, then as given.
func trustKeys(p string) []string {
	c := canonical(p)
	if c == p {
		return []string{p}
	}
	return []string{c, p}
}

func (tc *trustContext) trusted(dir string) bool {
	for _, keys := range [][]string{trustKeys(dir), tc.rootKeys, tc.repoKeys} {
		for _, k := range keys {
			if lv, ok := tc.levels[k]; ok {
				return lv == TrustedLevel
			}
		}
	}
	return false
}

// findProjectRoot returns the nearest ancestor of cwd (cwd included; cwd need not exist)
// holding one of markers, else cwd. No markers: cwd.
func findProjectRoot(cwd string, markers []string) string {
	if len(markers) == 0 {
		return cwd
	}
	for d := cwd; ; d = filepath.Dir(d) {
		for _, m := range markers {
			if isMarker(filepath.Join(d, m), m) {
				return d
			}
		}
		if d == filepath.Dir(d) {
			return cwd
		}
	}
}

// isMarker reports whether p marks a project root. ".git" must be a non-directory or a
// directory with HEAD (PROBED: an empty .git directory does not count, an empty .git
// file does); any other marker counts when it exists.
func isMarker(p, marker string) bool {
	st, err := os.Stat(p)
	if err != nil {
		return false
	}
	if marker == ".git" && st.IsDir() {
		_, err := os.Stat(filepath.Join(p, "HEAD"))
		return err == nil
	}
	return true
}

// gitRoots returns the checkout root holding cwd (the nearest ancestor of cwd, or of
// its parent when cwd is not a directory, with a .git entry) and the repository root
// for trust: the checkout root when .git is a directory, the main checkout of a valid
// linked worktree (worktreeMain), else "".
func gitRoots(cwd string) (checkout, repo string) {
	base := cwd
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		base = filepath.Dir(cwd)
	}
	for d := base; ; d = filepath.Dir(d) {
		dotGit := filepath.Join(d, ".git")
		if st, err := os.Stat(dotGit); err == nil {
			if st.IsDir() {
				return d, d
			}
			return d, worktreeMain(d, dotGit)
		}
		if d == filepath.Dir(d) {
			return "", ""
		}
	}
}

// worktreeMain returns the main checkout of the linked worktree whose gitfile is
// dotGit, or "" when the gitfile is not a valid linked-worktree pointer (PROBED on
// 0.171.0: the admin directory <main>/.git/worktrees/<name> must hold a commondir that
// resolves to <main>/.git and a gitdir that points back at dotGit; a gitfile naming any
// other directory gives no repository root at all).
func worktreeMain(checkout, dotGit string) string {
	data, err := os.ReadFile(dotGit)
	if err != nil {
		return ""
	}
	admin, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if admin = strings.TrimSpace(admin); !ok || admin == "" {
		return ""
	}
	admin = resolveAgainst(checkout, admin)
	if filepath.Base(filepath.Dir(admin)) != "worktrees" {
		return ""
	}
	common := filepath.Dir(filepath.Dir(admin))
	main := filepath.Dir(common)
	same := func(a, b string) bool { return canonical(a) == canonical(b) }
	cd, err := os.ReadFile(filepath.Join(admin, "commondir"))
	if err != nil || !same(resolveAgainst(admin, strings.TrimSpace(string(cd))), common) {
		return ""
	}
	back, err := os.ReadFile(filepath.Join(admin, "gitdir"))
	if err != nil || !same(resolveAgainst(admin, strings.TrimSpace(string(back))), dotGit) {
		return ""
	}
	if !same(filepath.Join(main, ".git"), common) {
		return ""
	}
	return main
}

// resolveAgainst makes p absolute against base and cleans it.
func resolveAgainst(base, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}

// hooksFolder returns, for a project directory of a linked worktree, the matching
// .codex folder of the main checkout, whose [hooks] replace the worktree's (READ:
// root_checkout_hooks_folder_for_dir; PROBED on 0.171.0); "" otherwise.
func (tc *trustContext) hooksFolder(dir string) string {
	if tc.checkoutRoot == "" || tc.repoRoot == "" || tc.checkoutRoot == tc.repoRoot {
		return ""
	}
	rel, err := filepath.Rel(tc.checkoutRoot, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return ""
	}
	return filepath.Join(tc.repoRoot, rel, ProjectConfigDir)
}
