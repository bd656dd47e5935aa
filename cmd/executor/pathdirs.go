package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// pathDirsFlag is --prepend-path-dir DIR (repeatable; env EXECUTOR_PREPEND_PATH_DIRS, a
// ':'-separated list): directories of helper binaries the executor's host ships (ripgrep,
// say), advertised as environmentInfo.prependPathDirs (capabilities-0.171.0.md §12.2) so
// that clients put them in front of the PATH they send, as the reference advertises its
// package's codex-path directory.
type pathDirsFlag struct{ dirs []string }

func (p *pathDirsFlag) String() string { return strings.Join(p.dirs, ":") }

func (p *pathDirsFlag) Set(v string) error {
	p.dirs = append(p.dirs, v)
	return nil
}

// addPathDirsFlag registers the flag on fs, seeded from the environment variable.
func addPathDirsFlag(fs *flag.FlagSet) *pathDirsFlag {
	p := &pathDirsFlag{}
	if v := os.Getenv("EXECUTOR_PREPEND_PATH_DIRS"); v != "" {
		p.dirs = strings.Split(v, ":")
	}
	fs.Var(p, "prepend-path-dir", "directory of helper binaries (e.g. ripgrep) clients should put first on the PATH they send; absolute, existing; repeatable, in priority order [EXECUTOR_PREPEND_PATH_DIRS, ':'-separated]")
	return p
}

// check returns the directories, each absolute, cleaned and an existing directory: a
// typo must fail at start-up, not leave every client with a PATH entry that does not exist.
func (p *pathDirsFlag) check() ([]string, error) {
	var out []string
	for _, d := range p.dirs {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("%w: --prepend-path-dir %q must be an absolute path", errUsage, d)
		}
		d = filepath.Clean(d)
		fi, err := os.Stat(d)
		if err != nil {
			return nil, fmt.Errorf("--prepend-path-dir: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("--prepend-path-dir %s: not a directory", d)
		}
		out = append(out, d)
	}
	return out, nil
}
