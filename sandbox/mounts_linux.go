package sandbox

// bwrap mount-argument construction (spec/sandbox.md §3.6). Runs in the launcher stage,
// in host namespaces, right before bwrap starts: it inspects the filesystem (skip
// entries, platform roots, deny-glob expansion, symlinks, protected metadata) and emits
// the filesystem half of the bwrap argv plus the host mount targets bwrap would
// otherwise create (they are pre-created and registered for inode-checked cleanup).
//
// Emission order (finish): a fixed prefix (baseline --ro-bind / /, --bind / / or
// --tmpfs /; --dev /dev; the app-server socket directory mask when the baseline shows
// it), then every other mount ordered by destination depth, and at one depth writable
// binds before read-only binds before masks. bwrap applies mounts in argv order and a
// mount covers everything mounted earlier at or below its destination, so with this
// order no mount is ever covered by a later one except by one at its own destination
// that is at least as restrictive: whatever is hidden or read-only stays so. Two
// mounts are placed outside that order:
//   - the app-server socket directory D (spec/sandbox.md §2.7) is masked again right
//     after every bind of D or an ancestor of D (a writable /tmp), and nothing is
//     mounted inside D;
//   - --remount-ro P of a masking tmpfs comes right after the last mount inside P (bwrap
//     creates those mount points in the tmpfs), so before anything that could cover P:
//     the remount always finds our tmpfs on top at P (issue 12: a remount that found a
//     later --bind /tmp /tmp there failed every command with EINVAL).

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/execlab/executor/sandbox/policy"
)

type mountEntry struct {
	path      string
	access    policy.Access
	protected bool // protected metadata name W/N
}

// hostTarget is a path bwrap mounts onto inside a host-writable root.
type hostTarget struct {
	path     string
	dir      bool
	existing bool // pre-existing empty inode: never deleted
	dev, ino uint64
}

type mountPlan struct {
	args    []string
	dataFDs []int // descriptors referenced by --ro-bind-data / --ro-bind-fd / --bind-fd, left open over exec
	targets []hostTarget
}

type buildError struct{ msg string }

func (e *buildError) Error() string { return "Fatal error: " + e.msg }

func fatalf(format string, args ...any) error { return &buildError{msg: fmt.Sprintf(format, args...)} }

// mountOptions tune buildMounts.
type mountOptions struct {
	// dry opens no descriptor: each --ro-bind-data / --ro-bind-fd refers to fd -1 and
	// only len(plan.dataFDs) tells that one is needed. A dry plan is for inspection in
	// a long-lived, multithreaded process, where a descriptor without O_CLOEXEC would
	// leak into concurrently spawned children.
	dry bool
	// roBindFD: bwrap supports --ro-bind-fd (spec/sandbox.md §3.6 SHOULD; robindfd_linux.go)
	// and so --bind-fd, which bubblewrap added in the same change (nested_linux.go).
	roBindFD bool
}

// buildMounts computes the mount arguments for p. registryDir is hidden read-only when
// it lies inside a writable root.
func buildMounts(p *policy.Policy, registryDir string, opts mountOptions) (*mountPlan, error) {
	if !p.Restricted { // unrestricted under bwrap (managed network): "/" writable (§3.6)
		q := *p
		q.Restricted, q.Entries = true, []policy.ResolvedEntry{{Path: "/", Access: policy.AccessWrite}}
		p = &q
	}
	ents, err := launchEntries(p)
	if err != nil {
		return nil, err
	}
	b := &mountBuilder{ents: ents, fullWrite: p.FullWrite(), dry: opts.dry, roBindFD: opts.roBindFD}
	return b.build(registryDir)
}

// launchEntries applies the launch-time, filesystem-dependent steps.
//
// missing_path_behavior "skip" drops only a missing write entry (it could otherwise
// exempt a protected metadata name below it). A missing read or deny entry is kept, so
// below a writable root it is masked like any missing carve-out and cannot be created:
// observed from codex 0.171.0 and 0.169.0, which mask missing `skip` carve-outs such as
// the project_roots .git/.agents/.codex entries the codex CLI adds to workspace-write
// and approved root-write profiles (linuxApprovedRootWritePreservesRestrictions).
// Elsewhere a missing read or deny path needs no mount, so keeping it changes nothing.
func launchEntries(p *policy.Policy) ([]mountEntry, error) {
	var ents []mountEntry
	for _, e := range p.Entries {
		if e.SkipIfMissing && e.Access == policy.AccessWrite && !exists(e.Path) {
			continue
		}
		ents = append(ents, mountEntry{path: e.Path, access: e.Access})
	}
	if p.PlatformDefaults() {
		for _, r := range policy.PlatformReadRoots {
			if exists(r) && !hasEntryAt(ents, r) && accessOf(ents, r) == policy.AccessDeny {
				ents = append(ents, mountEntry{path: r, access: policy.AccessRead})
			}
		}
	}
	for _, g := range p.DenyGlobs {
		matches, err := expandGlob(g, p.GlobScanMaxDepth)
		if err != nil {
			return nil, fatalf("unreadable glob `%s` cannot be safely expanded; use a pattern with a non-root directory prefix", g)
		}
		for _, m := range matches {
			ents = append(ents, mountEntry{path: m, access: policy.AccessDeny})
			if fi, err := os.Lstat(m); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				if t, err := filepath.EvalSymlinks(m); err == nil {
					ents = append(ents, mountEntry{path: t, access: policy.AccessDeny})
				}
			}
		}
	}
	return ents, nil
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func hasEntryAt(ents []mountEntry, p string) bool {
	for _, e := range ents {
		if e.path == p {
			return true
		}
	}
	return false
}

// accessOf is the entry precedence (deepest, strongest on ties, none = deny).
func accessOf(ents []mountEntry, p string) policy.Access {
	a, _ := winner(ents, p)
	return a
}

func winner(ents []mountEntry, p string) (policy.Access, string) {
	best, bestDepth, bestPath := policy.Access(0), -1, ""
	for _, e := range ents {
		if !policy.IsWithin(p, e.path) {
			continue
		}
		d := depthOf(e.path)
		if d > bestDepth || d == bestDepth && e.access > best {
			best, bestDepth, bestPath = e.access, d, e.path
		}
	}
	if best == 0 {
		return policy.AccessDeny, ""
	}
	return best, bestPath
}

func depthOf(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

type mountBuilder struct {
	ents      []mountEntry
	fullWrite bool
	canon     map[string]string // write root -> canonical target
	rootFD    map[string]int    // canonical target of a nested writable root -> its walk's O_CLOEXEC descriptor (nested_linux.go)
	plan      mountPlan
	ops       []mountOp // mounts in emission order; finish orders them into plan.args
	perms     []string  // a pending "--perms N" for the next op (add)
	usedData  map[string]bool
	bound     map[string]bool // ancestors already self-bound (bindAncestors)
	dry       bool            // open no descriptors (mountOptions.dry)
	roBindFD  bool            // carve-outs in writable roots bind a descriptor (mountOptions.roBindFD)
}

// mountOp is one bwrap mount: its arguments (with any --perms prefix) and destination.
type mountOp struct {
	args    []string
	dest    string
	kind    opKind
	fd      int  // descriptor consumed (--ro-bind-data, --ro-bind-fd, --bind-fd; -1 in dry plans), else noFD
	remount bool // masking tmpfs: --remount-ro dest once the mounts inside it are made
}

// opKind orders mounts at one destination: a later mount there must be at least as
// restrictive as an earlier one.
type opKind int

const (
	opBind     opKind = iota // --bind, --bind-fd: host content, writable
	opReadOnly               // --ro-bind, --ro-bind-fd: host content, read-only
	opMask                   // --tmpfs, --ro-bind-data, --dev: not host content
)

// noFD marks a mountOp that consumes no descriptor.
const noFD = -2

func (b *mountBuilder) build(registryDir string) (*mountPlan, error) {
	b.canon = map[string]string{}
	b.rootFD = map[string]int{}
	b.usedData = map[string]bool{}
	b.bound = map[string]bool{}
	defer func() {
		for _, fd := range b.rootFD {
			unix.Close(fd)
		}
	}()
	plan, err := b.buildPlan(registryDir)
	if err != nil {
		for _, op := range b.ops { // descriptors meant for bwrap, which will not run
			if op.fd >= 0 {
				unix.Close(op.fd)
			}
		}
		return nil, err
	}
	return plan, nil
}

// buildPlan is build after its maps are made; on error the caller closes the
// descriptors opened so far.
func (b *mountBuilder) buildPlan(registryDir string) (*mountPlan, error) {
	extra, err := b.writableRoots()
	if err != nil {
		return nil, err
	}
	b.ents = append(b.ents, extra...)
	sort.SliceStable(b.ents, func(i, j int) bool {
		di, dj := depthOf(b.ents[i].path), depthOf(b.ents[j].path)
		if di != dj {
			return di < dj
		}
		return b.ents[i].path < b.ents[j].path
	})
	daemon := b.baseline()
	prefix := len(b.ops)
	b.bindDevShm()
	if err := b.emitEntries(); err != nil {
		return nil, err
	}
	b.protectRegistry(registryDir)
	b.finish(prefix, daemon)
	return &b.plan, nil
}

// writableRoots records each writable root's canonical target (and, for a root nested
// in another, the descriptor to bind: nested_linux.go) and returns the entries it
// adds: protected metadata names (read-only) and a .git file's gitdir target.
func (b *mountBuilder) writableRoots() ([]mountEntry, error) {
	var extra []mountEntry
	for _, e := range b.ents {
		if e.access != policy.AccessWrite || accessOf(b.ents, e.path) != policy.AccessWrite {
			continue
		}
		t, err := b.resolveRoot(e.path)
		if errors.Is(err, errRootMissing) {
			continue // missing writable roots are skipped
		}
		if err != nil {
			return nil, err
		}
		b.canon[e.path] = t
		if b.fullWrite {
			continue
		}
		if fi, err := os.Stat(t); err != nil || !fi.IsDir() {
			continue
		}
		for _, n := range protectedNames(b.ents, e.path) {
			pn := path.Join(e.path, n)
			if fi, err := os.Lstat(pn); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return nil, fatalf("cannot enforce sandbox read-only path %s because it crosses writable symlink %s", pn, pn)
			}
			extra = append(extra, mountEntry{path: pn, access: policy.AccessRead, protected: true})
		}
		if gd := gitdirTarget(e.path); gd != "" {
			extra = append(extra, mountEntry{path: gd, access: policy.AccessRead})
		}
	}
	return extra, nil
}

// baseline emits the root mount, /dev and the app-server socket directory mask, and
// returns that directory ("" when there is none to hide).
func (b *mountBuilder) baseline() string {
	root := accessOf(b.ents, "/")
	if !hasEntryAt(b.ents, "/") {
		root = policy.AccessDeny
	}
	switch root {
	case policy.AccessWrite:
		b.add("--bind", "/", "/")
	case policy.AccessRead:
		b.add("--ro-bind", "/", "/")
	default:
		b.add("--tmpfs", "/")
	}
	b.add("--dev", "/dev")
	daemon := daemonDir()
	if root != policy.AccessDeny && daemon != "" {
		b.maskTmpfs("000", daemon)
	}
	return daemon
}

// bindDevShm re-binds the host's /dev/shm over the fresh --dev /dev when a writable "/"
// is what makes it writable: POSIX shared memory stays the host's, as the policy grants
// (observed from codex 0.171.0 and 0.169.0: a root-write launch under bubblewrap sees
// the host /dev/shm, and a file created there appears on the host; the reference passes
// --bind-try /dev/shm /dev/shm). A deeper entry (/dev, /dev/shm) decides by itself.
// Nothing is bound when /dev/shm is not a real directory (a symlink is not followed).
// It is ordered by depth like every other mount (finish), so a carve-out below it still
// covers it.
func (b *mountBuilder) bindDevShm() {
	const shm = "/dev/shm"
	if acc, from := winner(b.ents, shm); acc != policy.AccessWrite || from != "/" {
		return
	}
	if fi, err := os.Lstat(shm); err != nil || !fi.IsDir() {
		return
	}
	b.add("--bind", shm, shm)
}

// emitEntries emits every entry path once, with its effective access.
func (b *mountBuilder) emitEntries() error {
	done := map[string]bool{"/": true}
	for i, e := range b.ents {
		if done[e.path] {
			continue
		}
		done[e.path] = true
		acc, _ := winner(b.ents, e.path)
		prot := false
		for _, o := range b.ents {
			if o.path == e.path && o.protected {
				prot = true
			}
		}
		if err := b.emit(e.path, acc, prot, b.ents[i+1:]); err != nil {
			return err
		}
	}
	return nil
}

// protectRegistry re-binds the mount registry read-only when it lies inside a
// writable root. It is created now (as the reference does), not only when a launch
// registers host targets after this plan is built, so it is read-only from the first
// launch on; openRegistry validates it. Bound at its canonical path: a destination
// through a symlink (a symlinked $TMPDIR) makes bwrap fail to create the mount point.
func (b *mountBuilder) protectRegistry(registryDir string) {
	if registryDir == "" || accessOf(b.ents, registryDir) != policy.AccessWrite {
		return
	}
	os.Mkdir(registryDir, 0o700) // an error shows in EvalSymlinks
	if t, err := filepath.EvalSymlinks(registryDir); err == nil {
		b.add("--ro-bind", t, t)
	}
}

// daemonDir makes sure the app-server socket directory /tmp/codex-daemon-<euid> exists
// (mode 0700; the reference launcher creates it too, so a codex started later finds
// it already masked) and returns it, or "" when it is not a real directory (a symlink
// or file planted there is left alone and not mounted on).
func daemonDir() string {
	d := daemonDirPrefix + strconv.Itoa(os.Geteuid())
	os.Mkdir(d, 0o700) // an error shows in the Lstat below
	if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
		return ""
	}
	return d
}

// add records mount arguments as ops. A "--perms N" applies to the next mount, in this
// call or the next one.
func (b *mountBuilder) add(args ...string) {
	for len(args) > 0 {
		op := mountOp{fd: noFD}
		n := 2
		switch args[0] {
		case "--perms":
			b.perms = args[:2]
			args = args[2:]
			continue
		case "--tmpfs", "--dev":
			op.kind, op.dest = opMask, args[1]
		case "--bind":
			op.kind, op.dest, n = opBind, args[2], 3
		case "--ro-bind":
			op.kind, op.dest, n = opReadOnly, args[2], 3
		case "--bind-fd":
			op.kind, op.dest, n = opBind, args[2], 3
			op.fd, _ = strconv.Atoi(args[1])
		case "--ro-bind-fd", "--ro-bind-data":
			op.kind, op.dest, n = opReadOnly, args[2], 3
			if args[0] == "--ro-bind-data" {
				op.kind = opMask
			}
			op.fd, _ = strconv.Atoi(args[1])
		default:
			panic("sandbox: unknown mount flag " + args[0])
		}
		op.args = append(append([]string(nil), b.perms...), args[:n]...)
		b.perms = nil
		b.ops = append(b.ops, op)
		args = args[n:]
	}
}

// maskTmpfs mounts an empty tmpfs with mode perms at p, remounted read-only (finish).
func (b *mountBuilder) maskTmpfs(perms, p string) {
	b.add("--perms", perms, "--tmpfs", p)
	b.ops[len(b.ops)-1].remount = true
}

// finish orders b.ops after the first prefix into plan.args (see the file comment),
// masks daemon (if not "") again after every mount that shows it, and drops the mounts
// inside it with their descriptors and host targets.
func (b *mountBuilder) finish(prefix int, daemon string) {
	ops, dropped := orderOps(b.ops, prefix, daemon)
	b.plan.args = remountArgs(ops)
	if len(dropped) == 0 {
		return
	}
	// Each descriptor belongs to one op (roBindData, roBindCarveOut).
	b.plan.dataFDs = nil
	for _, op := range ops {
		if op.fd != noFD {
			b.plan.dataFDs = append(b.plan.dataFDs, op.fd)
		}
	}
	for _, op := range dropped {
		if op.fd >= 0 {
			unix.Close(op.fd)
		}
	}
	targets := b.plan.targets[:0]
	for _, t := range b.plan.targets {
		if t.path == daemon || !policy.IsWithin(t.path, daemon) {
			targets = append(targets, t)
		}
	}
	b.plan.targets = targets
}

// orderOps sorts the ops after prefix by destination depth (binds before read-only
// binds before masks at one depth), masks daemon again after every mount that shows
// it, and returns the ops mounted inside daemon separately (dropped).
func orderOps(all []mountOp, prefix int, daemon string) (ops, dropped []mountOp) {
	body := all[prefix:]
	sort.SliceStable(body, func(i, j int) bool {
		di, dj := depthOf(body[i].dest), depthOf(body[j].dest)
		if di != dj {
			return di < dj
		}
		return body[i].kind < body[j].kind
	})
	ops = append([]mountOp(nil), all[:prefix]...)
	for _, op := range body {
		if daemon != "" && op.dest != daemon && policy.IsWithin(op.dest, daemon) {
			dropped = append(dropped, op)
			continue
		}
		ops = append(ops, op)
		if daemon != "" && op.kind != opMask && policy.IsWithin(daemon, op.dest) {
			ops = append(ops, mountOp{args: []string{"--perms", "000", "--tmpfs", daemon}, dest: daemon,
				kind: opMask, fd: noFD, remount: true})
		}
	}
	return ops, dropped
}

// remountArgs renders ops as bwrap arguments, each "--remount-ro P" after the last
// mount strictly inside P (or right after P's own tmpfs).
func remountArgs(ops []mountOp) []string {
	inside := map[string]int{} // remounted P -> index of the last op strictly inside P
	for _, op := range ops {
		if op.remount {
			inside[op.dest] = -1
		}
	}
	for j, op := range ops {
		for p := op.dest; p != "/"; {
			p = path.Dir(p)
			if _, ok := inside[p]; ok {
				inside[p] = j
			}
		}
	}
	after := make([][]string, len(ops))
	for i, op := range ops {
		if op.remount {
			last := max(i, inside[op.dest])
			after[last] = append(after[last], op.dest)
		}
	}
	var args []string
	for i, op := range ops {
		args = append(args, op.args...)
		for _, p := range after[i] {
			args = append(args, "--remount-ro", p)
		}
	}
	return args
}

// protectedNames: metadata names under writable root w without a write entry at or
// inside w/N (spec/sandbox.md §2.5).
func protectedNames(ents []mountEntry, w string) []string {
	var out []string
	for _, n := range policy.ProtectedMetadataNames {
		pn := path.Join(w, n)
		covered := false
		for _, e := range ents {
			if e.access == policy.AccessWrite && policy.IsWithin(e.path, pn) {
				covered = true
			}
		}
		if !covered {
			out = append(out, n)
		}
	}
	return out
}

// gitdirTarget returns the existing target of a "gitdir: X" .git file inside w.
func gitdirTarget(w string) string {
	f, err := os.Open(path.Join(w, ".git"))
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	line, _ := bufio.NewReader(io.LimitReader(f, 4096)).ReadString('\n')
	x, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return ""
	}
	x = strings.TrimSpace(x)
	if !strings.HasPrefix(x, "/") {
		x = path.Join(w, x)
	}
	x = path.Clean(x)
	if !exists(x) {
		return ""
	}
	return x
}

// emitSite is where one entry path lands: its parent's effective access, the writable
// root above it (when the parent is writable) and the path mounts target (remapped
// onto the writable root's canonical target).
type emitSite struct {
	parentAcc  policy.Access
	parentPath string // the winning ancestor entry
	wt         string // canonical writable root target, "" unless parentAcc is write
	target     string
}

// emit writes the mounts for one path whose effective entry access is acc.
func (b *mountBuilder) emit(p string, acc policy.Access, protected bool, deeper []mountEntry) error {
	site, err := b.siteOf(p, acc)
	if err != nil {
		return err
	}
	fi, statErr := os.Lstat(p)
	switch acc {
	case policy.AccessWrite:
		if t, ok := b.canon[p]; ok { // a missing writable root is skipped
			return b.bindWritable(t)
		}
		return nil
	case policy.AccessRead:
		return b.emitRead(p, site, fi, statErr, protected)
	case policy.AccessDeny:
		return b.emitDeny(p, site, fi, statErr, deeper)
	}
	return nil
}

// siteOf locates p: below a writable root, a carve-out must not cross a symlink and its
// ancestors are self-bound first.
func (b *mountBuilder) siteOf(p string, acc policy.Access) (emitSite, error) {
	parentAcc, parentPath := winner(b.ents, path.Dir(p))
	if !hasAncestorEntry(b.ents, p) {
		parentAcc = policy.AccessDeny
	}
	site := emitSite{parentAcc: parentAcc, parentPath: parentPath, target: p}
	if parentAcc != policy.AccessWrite {
		return site, nil
	}
	w := parentPath
	site.wt = w
	if t, ok := b.canon[w]; ok && t != w {
		site.target = t + strings.TrimPrefix(p, w)
		site.wt = t
	}
	if acc != policy.AccessWrite {
		if err := checkNoSymlink(w, p, acc); err != nil {
			return site, err
		}
		if err := b.bindAncestors(site.wt, site.target, acc); err != nil {
			return site, err
		}
	}
	return site, nil
}

// emitRead: a read-only carve-out (bound, by descriptor when bwrap can), a mask for a
// missing one below a writable root, nothing below a readable parent.
func (b *mountBuilder) emitRead(p string, site emitSite, fi fs.FileInfo, statErr error, protected bool) error {
	underWrite := site.parentAcc == policy.AccessWrite
	switch {
	case statErr != nil && underWrite:
		return b.maskMissing(p, site.parentPath, protected || isMetadataName(p))
	case statErr != nil:
		return nil
	case protected && underWrite && isEmpty(site.target):
		return b.maskEmptyProtected(site.target, fi.IsDir())
	case site.parentAcc == policy.AccessRead:
		return nil
	case underWrite && b.roBindFD:
		return b.roBindCarveOut(site.wt, site.target, policy.AccessRead)
	}
	b.add("--ro-bind", site.target, site.target)
	return nil
}

// emitDeny masks an existing deny path (a tmpfs for a directory, --perms 111 when a
// deeper entry needs traversal; an empty file otherwise), or a missing one below a
// writable root. Below the implicit deny of a tmpfs root an existing deny path is still
// masked, so the command sees EACCES, not ENOENT, and the denial heuristic fires
// (observed from codex 0.169.0 and 0.171.0 with `minimal: read` and /etc or /opt/x
// denied); inside a path already masked nothing more is needed.
func (b *mountBuilder) emitDeny(p string, site emitSite, fi fs.FileInfo, statErr error, deeper []mountEntry) error {
	switch {
	case statErr != nil && site.parentAcc == policy.AccessWrite:
		return b.maskMissing(p, site.parentPath, false)
	case statErr != nil:
		return nil
	case site.parentAcc == policy.AccessDeny && hasAncestorEntry(b.ents, p):
		return nil
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil // the glob expansion also masks the canonical target
	case fi.IsDir():
		perms := "000"
		for _, d := range deeper {
			if d.access != policy.AccessDeny && policy.IsWithin(d.path, p) && d.path != p {
				perms = "111"
			}
		}
		b.maskTmpfs(perms, site.target)
		return nil
	}
	b.add("--perms", "000")
	b.roBindData(site.target)
	return nil
}

// bindAncestors self-binds every existing directory strictly between the writable
// root target wt and the carve-out target (spec/sandbox.md §3.6 step 3, a deviation
// from the reference): each becomes a mount point, so the command cannot rename or
// remove an ancestor (EBUSY) and recreate the carve-out's path writable. Each
// ancestor is bound once, by descriptor when bwrap can (bindDirFD): bound by path, an
// ancestor swapped for a symlink between this check and bwrap's mount would bind the
// symlink's target writable.
func (b *mountBuilder) bindAncestors(wt, target string, acc policy.Access) error {
	rel := strings.TrimPrefix(target, wt)
	if rel == target || rel == "" {
		return nil
	}
	segs := strings.Split(strings.TrimPrefix(rel, "/"), "/")
	cur := wt
	for _, seg := range segs[:len(segs)-1] {
		cur = path.Join(cur, seg)
		fi, err := os.Lstat(cur)
		if err != nil || !fi.IsDir() {
			return nil // missing (masked at its first missing component) or not a directory
		}
		if b.bound[cur] {
			continue
		}
		b.bound[cur] = true
		if err := b.bindDirFD(wt, cur, target, acc); err != nil { // finish places it before every mount inside it
			return err
		}
	}
	return nil
}

func hasAncestorEntry(ents []mountEntry, p string) bool {
	for _, e := range ents {
		if e.path != p && policy.IsWithin(p, e.path) {
			return true
		}
	}
	return false
}

// checkNoSymlink refuses a carve-out below writable root w whose path crosses a
// symlink (spec/sandbox.md §2.10).
func checkNoSymlink(w, p string, acc policy.Access) error {
	rel := strings.TrimPrefix(strings.TrimPrefix(p, w), "/")
	cur := w
	for _, seg := range strings.Split(rel, "/") {
		if seg == "" {
			continue
		}
		cur = path.Join(cur, seg)
		fi, err := os.Lstat(cur)
		if err != nil {
			return nil
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			kind := "read-only"
			if acc == policy.AccessDeny {
				kind = "deny-read"
			}
			return fatalf("cannot enforce sandbox %s path %s because it crosses writable symlink %s", kind, p, cur)
		}
	}
	return nil
}

// isMetadataName reports whether p's last component is a protected metadata name. A
// missing read-only carve-out so named is masked as an empty read-only directory, like
// the protected names of a writable root (observed from codex 0.171.0 and 0.169.0: with
// "/" writable, a missing project_roots/.codex or .aws read entry is a directory mask,
// .git/sub or a deny entry .agents an empty file).
func isMetadataName(p string) bool {
	for _, n := range policy.ProtectedMetadataNames {
		if path.Base(p) == n {
			return true
		}
	}
	return false
}

func isEmpty(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil {
		return false
	}
	if fi.Mode().IsRegular() {
		return fi.Size() == 0
	}
	if !fi.IsDir() {
		return false
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) == 0
}

// maskMissing keeps a missing carve-out below writable root w uncreatable. Protected
// metadata whose parent exists becomes an empty read-only directory; anything else an
// empty read-only file at its first missing component.
func (b *mountBuilder) maskMissing(p, w string, protected bool) error {
	target := p
	if t, ok := b.canon[w]; ok && t != w {
		target = t + strings.TrimPrefix(p, w)
		w = t
	}
	if protected && exists(path.Dir(target)) {
		b.plan.targets = append(b.plan.targets, hostTarget{path: target, dir: true})
		b.maskTmpfs("555", target)
		return nil
	}
	q := w
	for _, seg := range strings.Split(strings.TrimPrefix(strings.TrimPrefix(target, w), "/"), "/") {
		q = path.Join(q, seg)
		if !exists(q) {
			break
		}
	}
	if b.usedData[q] {
		return nil
	}
	b.usedData[q] = true
	b.plan.targets = append(b.plan.targets, hostTarget{path: q})
	b.roBindData(q)
	return nil
}

func (b *mountBuilder) maskEmptyProtected(p string, dir bool) error {
	st, err := lstatIDs(p)
	if err != nil {
		return err
	}
	b.plan.targets = append(b.plan.targets, hostTarget{path: p, dir: dir, existing: true, dev: st.dev, ino: st.ino})
	if dir {
		b.maskTmpfs("555", p)
		return nil
	}
	b.roBindData(p)
	return nil
}

func (b *mountBuilder) roBindData(dest string) {
	if b.dry {
		b.plan.dataFDs = append(b.plan.dataFDs, -1)
		b.add("--ro-bind-data", "-1", dest)
		return
	}
	fd, err := unix.Open("/dev/null", unix.O_RDONLY, 0) // no O_CLOEXEC: bwrap inherits it
	if err != nil {
		// Fall back to an empty read-only tmpfs-free bind of /dev/null's content: an
		// unopenable /dev/null means the host is broken; make the mount fail in bwrap.
		fd = -1
	}
	b.plan.dataFDs = append(b.plan.dataFDs, fd)
	b.add("--ro-bind-data", strconv.Itoa(fd), dest)
}

type inodeID struct{ dev, ino uint64 }

func lstatIDs(p string) (inodeID, error) {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return inodeID{}, fmt.Errorf("inspecting %s: %w", p, err)
	}
	return inodeID{dev: uint64(st.Dev), ino: st.Ino}, nil
}

// expandGlob lists existing paths matching an absolute deny pattern without following
// symlinks, depth-capped by maxDepth (0 = none) below the static prefix.
func expandGlob(pattern string, maxDepth int) ([]string, error) {
	prefix, meta := policy.GlobStaticPrefix(pattern)
	if !meta {
		if exists(prefix) {
			return []string{path.Clean(prefix)}, nil
		}
		return nil, nil
	}
	if prefix == "" || prefix == "/" {
		return nil, errors.New("glob prefix too broad")
	}
	if _, err := os.Lstat(prefix); err != nil {
		return nil, nil
	}
	base := depthOf(prefix)
	var out []string
	err := filepath.WalkDir(prefix, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if policy.MatchGlob(pattern, p) {
			out = append(out, p)
			if len(out) > maxGlobMatches {
				return errors.New("too many glob matches")
			}
			if d.IsDir() && p != prefix {
				return fs.SkipDir
			}
		}
		if d.IsDir() && maxDepth > 0 && depthOf(p)-base >= maxDepth {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
