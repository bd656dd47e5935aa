package fs

import (
	"context"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/internal/oserr"
	"github.com/execlab/executor/internal/rustutf8"
	"github.com/execlab/executor/jsonwire"
)

// walk runs Walk in this process (routed decides where).
func (s *Service) walk(ctx context.Context, p *protocol.FsWalkParams) (*protocol.FsWalkResult, error) {
	o := p.Options
	if o.MaxDepth > MaxWalkDepth || o.MaxDirectories > MaxWalkDirectories || o.MaxEntries > MaxWalkEntries {
		return nil, jsonwire.InvalidRequest("filesystem walk limits exceed maximums: depth=%d, directories=%d, entries=%d",
			MaxWalkDepth, MaxWalkDirectories, MaxWalkEntries)
	}
	if o.MaxDirectories == 0 || o.MaxEntries == 0 {
		return nil, jsonwire.InvalidRequest("filesystem walk limits must be greater than zero")
	}
	root, err := nativePath(p.Path)
	if err != nil {
		return nil, err
	}
	w := &walker{
		ctx: ctx, opts: o,
		res:     &protocol.FsWalkResult{Entries: []protocol.FsWalkEntry{}, Errors: []protocol.FsWalkError{}},
		visited: map[string]bool{},
	}
	lst, err := os.Lstat(root)
	if err != nil {
		return nil, rpcError(err)
	}
	if lst.Mode()&os.ModeSymlink != 0 && !o.FollowDirectorySymlinks {
		return w.res, nil
	}
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return w.res, nil
	}
	if real, err := realpath(root); err == nil {
		w.visited[real] = true
	}
	w.run(walkDir{native: root, uri: string(protocol.FromNative(root)), depth: 0})
	return w.res, nil
}

type walkDir struct {
	native string
	uri    string
	depth  uint64
}

type walker struct {
	ctx     context.Context
	opts    protocol.FsWalkOptions
	res     *protocol.FsWalkResult
	visited map[string]bool // canonical paths of directories queued, for loop detection
	budget  int
	dirs    uint64
	// stopDescending is set once MaxDirectories is reached: entries are still listed,
	// no further directory is queued.
	stopDescending bool
}

func (w *walker) run(root walkDir) {
	queue := []walkDir{root}
	w.dirs = 1
	for len(queue) > 0 {
		if w.ctx.Err() != nil {
			w.res.Truncated = true
			return
		}
		d := queue[0]
		queue = queue[1:]
		des, err := os.ReadDir(d.native)
		if err != nil {
			if !w.addError(d.uri, oserr.Text(err)) {
				return
			}
			continue
		}
		// os.ReadDir returns entries sorted by name (byte order), as the walk requires.
		for _, de := range des {
			next, ok := w.visit(d, de)
			if !ok {
				return
			}
			if next != nil {
				queue = append(queue, *next)
			}
		}
	}
}

// visit records one directory entry and returns the directory to descend into, if
// any; ok is false once the walk must end (a limit was reached).
func (w *walker) visit(d walkDir, de os.DirEntry) (next *walkDir, ok bool) {
	name := de.Name()
	uri := childURI(d.uri, name)
	native, mode, errText := w.entryPath(d, de, uri)
	if errText != "" {
		return nil, w.addError(uri, errText)
	}
	isDir, include := classifyEntry(native, mode, w.opts.FollowDirectorySymlinks)
	if !include {
		return nil, true
	}
	kind := protocol.FsWalkKindFile
	if isDir {
		kind = protocol.FsWalkKindDirectory
	}
	if !w.addEntry(uri, kind) {
		return nil, false
	}
	if !isDir || d.depth+1 >= w.opts.MaxDepth+1 || w.stopDescending {
		return nil, true
	}
	if w.opts.PruneHiddenDirectories && strings.HasPrefix(name, ".") {
		return nil, true
	}
	if real, err := realpath(native); err == nil {
		if w.visited[real] {
			return nil, true
		}
		w.visited[real] = true
	}
	if w.dirs >= w.opts.MaxDirectories {
		w.res.Truncated = true
		w.stopDescending = true
		return nil, true
	}
	w.dirs++
	return &walkDir{native: native, uri: uri, depth: d.depth + 1}, true
}

// entryPath returns the native path and lstat mode of entry de of d, or the error text
// to record for its URI.
func (w *walker) entryPath(d walkDir, de os.DirEntry, uri string) (native string, mode os.FileMode, errText string) {
	name := de.Name()
	if cleanName(name) {
		// Fast path: the URI names exactly this entry, so its native path is the plain
		// join, and the type from the directory read needs no lstat (Go's ReadDir
		// lstats by itself where the filesystem reports no type).
		native = d.native + "/" + name
		if d.native == "/" {
			native = "/" + name
		}
		return native, de.Type(), ""
	}
	// The lossy URI may name a different path: resolve it like the reference.
	n, err := protocol.PathURI(uri).Native()
	if err != nil {
		return "", 0, err.Error()
	}
	st, err := os.Lstat(n)
	if err != nil {
		return "", 0, oserr.Text(err)
	}
	return n, st.Mode(), ""
}

// classifyEntry reports whether an entry is listed and whether it is a directory:
// directories and regular files are; a symlink only when following directory
// symlinks and it resolves to a directory; anything else is skipped.
func classifyEntry(native string, mode os.FileMode, followDirSymlinks bool) (isDir, include bool) {
	lst := modeInfo(mode)
	if lst.Mode()&os.ModeSymlink != 0 {
		if !followDirSymlinks {
			return false, false
		}
		st, err := os.Stat(native)
		if err != nil || !st.IsDir() {
			return false, false
		}
		return true, true
	}
	if lst.IsDir() {
		return true, true
	}
	return false, lst.Mode().IsRegular()
}

// addEntry appends an entry; false means the walk must stop (truncated).
func (w *walker) addEntry(uri, kind string) bool {
	cost := len(uri) + walkEntryOverhead
	if w.budget+cost > WalkResponseBudget {
		w.res.Truncated = true
		return false
	}
	w.budget += cost
	w.res.Entries = append(w.res.Entries, protocol.FsWalkEntry{Path: protocol.PathURI(uri), Kind: kind})
	return w.underEntryLimit()
}

// addError appends a per-entry failure; false means the budget is exhausted.
func (w *walker) addError(uri, msg string) bool {
	cost := len(uri) + len(msg) + walkEntryOverhead
	if w.budget+cost > WalkResponseBudget {
		w.res.Truncated = true
		return false
	}
	w.budget += cost
	w.res.Errors = append(w.res.Errors, protocol.FsWalkError{Path: protocol.PathURI(uri), Message: msg})
	return w.underEntryLimit()
}

// underEntryLimit reports whether more items fit: entries and errors both count against
// maxEntries (observed from codex 0.169.0); reaching it sets truncated.
func (w *walker) underEntryLimit() bool {
	if uint64(len(w.res.Entries)+len(w.res.Errors)) >= w.opts.MaxEntries {
		w.res.Truncated = true
		return false
	}
	return true
}

// childURI joins a directory URI and a raw file name the way the reference's PathUri join
// does: the name is made valid UTF-8 lossily and tabs, newlines and carriage returns are
// dropped (URL parsing strips them) before percent-encoding.
func childURI(dir, name string) string {
	name = rustutf8.Lossy(name)
	if strings.ContainsAny(name, "\t\n\r") {
		name = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(name)
	}
	b := make([]byte, 0, len(dir)+1+len(name)+8)
	b = append(b, dir...)
	if !strings.HasSuffix(dir, "/") {
		b = append(b, '/')
	}
	return string(protocol.AppendNativeSegment(b, name))
}

// cleanName reports whether a directory entry name survives childURI unchanged: valid
// UTF-8 without tab, newline or carriage return.
func cleanName(name string) bool {
	return utf8.ValidString(name) && !strings.ContainsAny(name, "\t\n\r")
}

// modeInfo adapts a bare file mode to the IsDir/Mode calls the walk makes.
type modeInfo os.FileMode

func (m modeInfo) IsDir() bool       { return os.FileMode(m).IsDir() }
func (m modeInfo) Mode() os.FileMode { return os.FileMode(m) }
