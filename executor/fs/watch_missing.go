package fs

// fs/watchMissing and its notification fs/missingChanged (capabilities-0.171.0.md §7,
// fsWatchMissing).
//
// Protocol flow: the client sends fs/watchMissing {watchId, missing[], present?}; the
// reply says whether a watch was armed ({watching:true}); an armed watch later sends one
// fs/missingChanged {watchId} and is spent. Each connection has one watch set and a
// generation counter that starts at 0: a watchId not greater than the highest id seen on
// the connection answers false and leaves the current set alone; a greater one replaces
// the set (the old one stops firing even when the new call answers false). No watch is
// armed (false) when missing is empty or holds more than MaxWatchMissingPaths entries, a
// missing path exists (lstat: a dangling symlink exists), a missing path cannot be
// watched (its nearest existing ancestor is not a directory, a foreign-OS URI), present
// does not exist (stat, following symlinks), or the kernel refuses the watch.
//
// What fires (each observed on codex 0.171.0): a missing path or any missing ancestor of
// it appearing (created or renamed into place); an existing ancestor of a missing path
// removed or renamed away; present modified, its attributes changed, removed, renamed or
// replaced. Unrelated siblings, entries created inside a present directory, and reads do
// not fire. Changes made through this executor's own fs methods fire like any other.
//
// Mechanism: Linux inotify through golang.org/x/sys/unix directly (no fsnotify: it
// watches whole directories and reports names, while this needs per-watch masks, the
// watch descriptors of a chain of ancestors, and an instance it can close to end the
// reader). An armed set owns one inotify instance and one goroutine, routineEvents,
// which reads events, fires at the first matching one, and exits; nothing is held while
// no watch is armed. For every missing path each existing ancestor directory from the
// nearest one up to "/" is watched for entries named like the next path component being
// created, removed or renamed (IN_CREATE, IN_MOVED_TO, IN_DELETE, IN_MOVED_FROM) and for
// its own removal (IN_DELETE_SELF, IN_MOVE_SELF); present is watched for IN_MODIFY,
// IN_ATTRIB and its own removal, and its parent for entries named like it. A directory
// watched for several reasons has one watch descriptor whose names and roles are merged
// (IN_MASK_ADD). An event queue overflow fires (a change may have been lost). Paths are
// re-checked after the watches are armed, so a change racing the registration fires at
// once instead of being missed.
//
// Resources: at most one inotify instance and one goroutine per connection (the armed
// set), released when the set fires, is replaced, or the connection closes (Close waits
// for the goroutine); at most MaxWatchMissingPaths paths per set, each costing one watch
// per distinct existing ancestor directory (the kernel's fs.inotify.max_user_watches and
// max_user_instances bound the rest; when the kernel refuses, the call answers false and
// the client falls back to probing). The notification goes through the connection's
// Notifier; a set torn down while its notification is blocked on a full connection
// queue cancels that send.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"unsafe"

	"github.com/execlab/executor/executor/protocol"
	"golang.org/x/sys/unix"
)

// Notifier sends a server notification on the connection that owns a MissingWatcher
// (jsonrpc.Conn implements it). Notify may block on a full connection queue until ctx
// is done.
type Notifier interface {
	Notify(ctx context.Context, method string, params any) error
}

// MissingWatcher is one connection's fs/watchMissing state. It is safe for concurrent
// use. Close must be called when the connection closes; it returns after the armed
// set's goroutine has exited.
type MissingWatcher struct {
	n Notifier
	// mu guards maxID, current, live and closed. It is held while a set is registered and
	// its goroutine started, never while waiting for a goroutine or sending a
	// notification.
	mu      sync.Mutex
	maxID   uint64
	current *watchSet // the armed set, nil when none
	// live are the sets whose goroutine has not exited: the armed one, and spent ones
	// still sending their notification (Close cancels and waits for all of them).
	live   map[*watchSet]struct{}
	closed bool
}

// NewMissingWatcher returns a watcher that sends fs/missingChanged through n. It starts
// nothing.
func NewMissingWatcher(n Notifier) *MissingWatcher {
	return &MissingWatcher{n: n, live: map[*watchSet]struct{}{}}
}

var notWatching = &protocol.FsWatchMissingResult{Watching: false}

// Watch implements fs/watchMissing (see the file comment). It never fails: every
// condition that prevents a watch answers {watching:false}.
func (w *MissingWatcher) Watch(_ context.Context, p *protocol.FsWatchMissingParams) (*protocol.FsWatchMissingResult, error) {
	w.mu.Lock()
	if w.closed || p.WatchID <= w.maxID {
		w.mu.Unlock()
		return notWatching, nil
	}
	w.maxID = p.WatchID
	old := w.current
	w.current = nil
	w.mu.Unlock()
	if old != nil {
		old.stop()
	}
	s := armWatchSet(p)
	if s == nil {
		return notWatching, nil
	}
	w.mu.Lock()
	if w.closed || w.maxID != p.WatchID { // closed, or replaced by a later call meanwhile
		w.mu.Unlock()
		s.closeFile()
		return notWatching, nil
	}
	w.current = s
	s.start(w)
	w.mu.Unlock()
	return &protocol.FsWatchMissingResult{Watching: true}, nil
}

// Close tears down the armed set and refuses later watches. Called on disconnect.
func (w *MissingWatcher) Close() {
	w.mu.Lock()
	w.closed = true
	w.current = nil
	live := make([]*watchSet, 0, len(w.live))
	for s := range w.live {
		live = append(live, s)
	}
	w.mu.Unlock()
	for _, s := range live {
		s.stop()
	}
}

// exited is called by s's goroutine as it returns.
func (w *MissingWatcher) exited(s *watchSet) {
	w.mu.Lock()
	delete(w.live, s)
	w.mu.Unlock()
}

// fire is called by s's goroutine at its first matching event: if s is still the armed
// set it is spent and its notification sent.
func (w *MissingWatcher) fire(s *watchSet) {
	w.mu.Lock()
	if w.current != s {
		w.mu.Unlock()
		return
	}
	w.current = nil
	w.mu.Unlock()
	s.closeFile()
	_ = w.n.Notify(s.ctx, protocol.MethodFsMissingChanged, &protocol.FsMissingChangedNotification{WatchID: s.id})
}

// Inotify masks.
const (
	// chainMask watches an ancestor directory of a missing path: entries appearing or
	// going away (filtered by name), and the directory itself going away.
	chainMask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_DELETE | unix.IN_MOVED_FROM |
		unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR
	// presentMask watches the present path itself.
	presentMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
	// parentMask watches present's parent for entries named like present.
	parentMask = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_ONLYDIR
	// selfGone are the events of a watched inode going away.
	selfGone = unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
)

// watchRole is what one watch descriptor stands for.
type watchRole struct {
	names   map[string]bool // entry names that fire (chain and present-parent watches)
	chain   bool            // an ancestor directory of a missing path: its removal fires
	present bool            // the present path: its own modify/attrib/removal fires
}

// watchSet is one armed fs/watchMissing call: an inotify instance and what its watch
// descriptors mean. roles is written only before start and read only by routineEvents.
type watchSet struct {
	id    uint64
	file  *os.File // the inotify instance, non-blocking, in the runtime poller
	roles map[int32]*watchRole
	// racing: a path changed while the watches were armed; fire at once.
	racing bool

	ctx       context.Context // cancelled by stop: releases a blocked notification
	cancel    context.CancelFunc
	closeOnce sync.Once
	done      chan struct{} // closed when routineEvents exits
}

// armWatchSet applies the watching rules and arms the watches, or returns nil (no watch).
func armWatchSet(p *protocol.FsWatchMissingParams) *watchSet {
	if len(p.Missing) == 0 || len(p.Missing) > MaxWatchMissingPaths {
		return nil
	}
	missing := make([]string, len(p.Missing))
	for i, u := range p.Missing {
		native, err := u.Native()
		if err != nil {
			return nil
		}
		missing[i] = filepath.Clean(native)
	}
	var present string
	if p.Present != nil {
		native, err := p.Present.Native()
		if err != nil {
			return nil
		}
		present = filepath.Clean(native)
		if _, err := os.Stat(present); err != nil {
			return nil
		}
	}
	anchors := make([]string, len(missing))
	for i, m := range missing {
		a, ok := nearestAncestor(m)
		if !ok {
			return nil
		}
		anchors[i] = a
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &watchSet{id: p.WatchID, file: os.NewFile(uintptr(fd), "inotify"), roles: map[int32]*watchRole{},
		ctx: ctx, cancel: cancel, done: make(chan struct{})}
	for i, m := range missing {
		child := m
		for dir := anchors[i]; ; dir = filepath.Dir(dir) {
			r := s.add(fd, dir, chainMask)
			if r == nil {
				s.closeFile()
				return nil
			}
			r.chain = true
			r.names[nextComponent(dir, child)] = true
			child = dir
			if dir == "/" {
				break
			}
		}
	}
	if present != "" {
		r := s.add(fd, present, presentMask)
		if r == nil {
			s.closeFile()
			return nil
		}
		r.present = true
		if parent := filepath.Dir(present); parent != present {
			if r := s.add(fd, parent, parentMask); r != nil {
				r.names[filepath.Base(present)] = true
			}
		}
	}
	// Re-check now that the watches are armed: a path that appeared is refused as it
	// would have been a moment earlier; an ancestor that appeared or went away meanwhile
	// may have left no event, so the set fires at once.
	for i, m := range missing {
		if _, err := os.Lstat(m); err == nil {
			s.closeFile()
			return nil
		}
		if a, ok := nearestAncestor(m); !ok || a != anchors[i] {
			s.racing = true
		}
	}
	if present != "" {
		if _, err := os.Stat(present); err != nil {
			s.racing = true
		}
	}
	return s
}

// add watches path with mask (merged into an existing watch of the same inode) and
// returns its role, or nil when the kernel refuses.
func (s *watchSet) add(fd int, path string, mask uint32) *watchRole {
	wd, err := unix.InotifyAddWatch(fd, path, mask|unix.IN_MASK_ADD)
	if err != nil {
		return nil
	}
	r := s.roles[int32(wd)]
	if r == nil {
		r = &watchRole{names: map[string]bool{}}
		s.roles[int32(wd)] = r
	}
	return r
}

// nearestAncestor reports the deepest existing ancestor of the missing path m, which must
// be a directory; ok is false when m itself exists (lstat) or the ancestor is not a
// directory.
func nearestAncestor(m string) (string, bool) {
	if _, err := os.Lstat(m); err == nil {
		return "", false
	}
	for dir := filepath.Dir(m); ; dir = filepath.Dir(dir) {
		st, err := os.Stat(dir)
		if err == nil {
			return dir, st.IsDir()
		}
		if dir == "/" {
			return "", false
		}
	}
}

// nextComponent is the first component of child below dir (child is below dir).
func nextComponent(dir, child string) string {
	rel, err := filepath.Rel(dir, child)
	if err != nil {
		return child
	}
	for {
		d := filepath.Dir(rel)
		if d == "." {
			return rel
		}
		rel = d
	}
}

// start runs routineEvents; w.mu is held (the set is registered first).
func (s *watchSet) start(w *MissingWatcher) {
	w.live[s] = struct{}{}
	go s.routineEvents(w)
}

// stop tears a started set down and waits for its goroutine.
func (s *watchSet) stop() {
	s.cancel()
	s.closeFile()
	<-s.done
}

// closeFile closes the inotify instance (idempotent), which ends a blocked read.
func (s *watchSet) closeFile() {
	s.closeOnce.Do(func() { s.file.Close() })
}

// routineEvents reads inotify events until one matches (then fires) or the instance is
// closed.
func (s *watchSet) routineEvents(w *MissingWatcher) {
	defer close(s.done)
	defer w.exited(s)
	defer s.cancel()
	if s.racing {
		w.fire(s)
		return
	}
	buf := make([]byte, watchEventBuffer)
	for {
		n, err := s.file.Read(buf)
		if err != nil {
			if errors.Is(err, syscall.EINTR) || errors.Is(err, syscall.EAGAIN) {
				continue
			}
			return // closed: replaced, fired or disconnected
		}
		if s.matches(buf[:n]) {
			w.fire(s)
			return
		}
	}
}

// matches reports whether any event in buf (whole inotify_event records) fires the set.
func (s *watchSet) matches(buf []byte) bool {
	for off := 0; off+unix.SizeofInotifyEvent <= len(buf); {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		nameLen := int(ev.Len)
		end := off + unix.SizeofInotifyEvent + nameLen
		if end > len(buf) {
			return false
		}
		name := buf[off+unix.SizeofInotifyEvent : end]
		for len(name) > 0 && name[len(name)-1] == 0 {
			name = name[:len(name)-1]
		}
		off = end
		if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
			return true
		}
		r := s.roles[ev.Wd]
		if r == nil || ev.Mask&unix.IN_IGNORED != 0 {
			continue
		}
		if len(name) > 0 {
			if r.names[string(name)] && ev.Mask&(unix.IN_CREATE|unix.IN_MOVED_TO|unix.IN_DELETE|unix.IN_MOVED_FROM) != 0 {
				return true
			}
			continue
		}
		if r.chain && ev.Mask&selfGone != 0 || r.present && ev.Mask&(presentMask) != 0 {
			return true
		}
	}
	return false
}
