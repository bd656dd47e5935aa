package sandbox

// Synthetic mount-target registry (spec/sandbox.md §2.7, §3.7). bwrap creates missing
// mount targets as real, empty files and directories on the host inside writable
// roots; the launcher pre-creates them itself (so it knows their inodes), records a
// marker per launcher pid under flock, and after bwrap exits deletes a target only if
// no live launcher still claims it and it is still the same, empty inode. Pre-existing
// ("existing") targets are never deleted.
//
// Layout: <registry>/lock, <registry>/<fnv1a64(path) hex>/<pid> containing
// "<kind> <dev>:<ino>\n<path>\n".

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

type registry struct {
	dir  string
	lock *os.File
}

type errRegistrySymlink struct{ path string }

func (e *errRegistrySymlink) Error() string {
	return "synthetic mount registry must not be a symlink: " + e.path
}

// registryPathFor is $TMPDIR/codex-bwrap-synthetic-mount-targets-<euid> for a
// launcher whose (command) TMPDIR is tmp, else under /tmp.
func registryPathFor(tmp string) string {
	if !strings.HasPrefix(tmp, "/") {
		tmp = "/tmp"
	}
	return filepath.Join(tmp, registryPrefix+strconv.Itoa(os.Geteuid()))
}

// openRegistry creates or validates the registry directory and takes its flock.
func openRegistry(dir string) (*registry, error) {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("creating synthetic mount registry: %w", err)
		}
		fi, err = os.Lstat(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("inspecting synthetic mount registry: %w", err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &errRegistrySymlink{path: dir}
	}
	st, ok := fi.Sys().(*unix.Stat_t)
	if !fi.IsDir() || ok && int(st.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("synthetic mount registry %s is not a directory owned by the euid", dir)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening registry lock: %w", err)
	}
	return &registry{dir: dir, lock: lock}, nil
}

func (r *registry) close() { r.lock.Close() }

func (r *registry) withLock(fn func() error) error {
	if err := unix.Flock(int(r.lock.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("locking registry: %w", err)
	}
	defer unix.Flock(int(r.lock.Fd()), unix.LOCK_UN)
	return fn()
}

func targetKey(p string) string {
	h := fnv.New64a()
	h.Write([]byte(p))
	return fmt.Sprintf("%016x", h.Sum64())
}

type marker struct {
	kind     string
	id       inodeID
	pid      int
	path     string
	filename string
}

func (r *registry) markers(p string) []marker {
	sub := filepath.Join(r.dir, targetKey(p))
	names, _ := os.ReadDir(sub)
	var out []marker
	for _, n := range names {
		pid, err := strconv.Atoi(n.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(sub, n.Name()))
		if err != nil {
			continue
		}
		var m marker
		lines := strings.SplitN(string(b), "\n", 3)
		if len(lines) < 2 || lines[1] != p {
			continue
		}
		if _, err := fmt.Sscanf(lines[0], "%s %d:%d", &m.kind, &m.id.dev, &m.id.ino); err != nil {
			continue
		}
		m.pid, m.path, m.filename = pid, p, filepath.Join(sub, n.Name())
		out = append(out, m)
	}
	return out
}

func pidAlive(pid int) bool {
	return pid == os.Getpid() || unix.Kill(pid, 0) == nil || unix.Kill(pid, 0) == unix.EPERM
}

// claim creates missing targets and records this launcher's markers. Targets already
// on disk are claimed as "synthetic" when a live launcher created them with the same
// inode, else as "existing".
func (r *registry) claim(targets []hostTarget) error {
	return r.withLock(func() error {
		for i := range targets {
			t := &targets[i]
			kind := "existing"
			if !t.existing {
				created, id, err := createTarget(t.path, t.dir)
				if err != nil {
					return err
				}
				t.dev, t.ino = id.dev, id.ino
				if created {
					kind = "synthetic"
				} else {
					for _, m := range r.markers(t.path) {
						if m.kind == "synthetic" && m.id == id && pidAlive(m.pid) {
							kind = "synthetic"
						}
					}
				}
				t.existing = kind == "existing"
			}
			sub := filepath.Join(r.dir, targetKey(t.path))
			if err := os.Mkdir(sub, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("registering mount target: %w", err)
			}
			body := fmt.Sprintf("%s %d:%d\n%s\n", kind, t.dev, t.ino, t.path)
			if err := os.WriteFile(filepath.Join(sub, strconv.Itoa(os.Getpid())), []byte(body), 0o600); err != nil {
				return fmt.Errorf("registering mount target: %w", err)
			}
		}
		return nil
	})
}

// Host mount targets are created, inspected and deleted relative to a descriptor of
// their parent directory opened by a walk from "/" that follows no symlink
// (openParentNoFollow). Every legitimate target path is canonical (a writable root's
// canonical target joined with a path checked symlink-free below it), so a symlink on
// the way means a directory was swapped since the plan was built, by sandboxed code
// that can write the root: the launch fails closed instead of creating (or deleting)
// an entry wherever the symlink points (issue 26, finding 2).

// openParentNoFollow opens p's parent directory (O_PATH|O_CLOEXEC) without following
// any symlink and returns it with p's last component.
func openParentNoFollow(p string) (int, string, error) {
	dir, base := filepath.Split(filepath.Clean(p))
	if !filepath.IsAbs(p) || base == "" || base == "." || base == ".." {
		return -1, "", fmt.Errorf("mount target %s is not a canonical absolute path", p)
	}
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", err
	}
	for _, seg := range strings.Split(strings.Trim(dir, "/"), "/") {
		if seg == "" {
			continue
		}
		next, err := unix.Openat(fd, seg, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, "", fmt.Errorf("opening the parent of mount target %s without following symlinks: %w", p, err)
		}
		fd = next
	}
	return fd, base, nil
}

// createTarget creates an empty directory or file; created is false if it existed. id
// is the target's inode (never followed through a symlink).
func createTarget(p string, dir bool) (created bool, id inodeID, err error) {
	pfd, base, err := openParentNoFollow(p)
	if err != nil {
		return false, id, fmt.Errorf("creating mount target %s: %w", p, err)
	}
	defer unix.Close(pfd)
	if dir {
		err = unix.Mkdirat(pfd, base, 0o755)
	} else {
		var fd int
		fd, err = unix.Openat(pfd, base, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
		if err == nil {
			unix.Close(fd)
		}
	}
	switch {
	case err == nil:
		created = true
	case err != unix.EEXIST:
		return false, id, fmt.Errorf("creating mount target %s: %w", p, err)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return created, id, fmt.Errorf("inspecting %s: %w", p, err)
	}
	return created, inodeID{dev: uint64(st.Dev), ino: st.Ino}, nil
}

// removeTarget deletes the synthetic target p if it is still inode id and empty.
func removeTarget(p string, id inodeID, dir bool) {
	pfd, base, err := openParentNoFollow(p)
	if err != nil {
		return
	}
	defer unix.Close(pfd)
	var st unix.Stat_t
	if unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || (inodeID{uint64(st.Dev), st.Ino}) != id {
		return
	}
	if dir {
		unix.Unlinkat(pfd, base, unix.AT_REMOVEDIR) // fails unless empty
		return
	}
	if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size == 0 {
		unix.Unlinkat(pfd, base, 0)
	}
}

// release drops this launcher's markers and deletes synthetic targets nobody else
// claims, if they are still the recorded, empty inode.
func (r *registry) release(targets []hostTarget) {
	_ = r.withLock(func() error {
		for _, t := range targets {
			others := false
			for _, m := range r.markers(t.path) {
				if m.pid == os.Getpid() {
					os.Remove(m.filename)
					continue
				}
				if pidAlive(m.pid) {
					others = true
				} else {
					os.Remove(m.filename) // stale marker of a dead launcher
				}
			}
			os.Remove(filepath.Join(r.dir, targetKey(t.path))) // only succeeds when empty
			if t.existing || others {
				continue
			}
			removeTarget(t.path, inodeID{t.dev, t.ino}, t.dir)
		}
		return nil
	})
}
