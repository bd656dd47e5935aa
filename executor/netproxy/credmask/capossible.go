package credmask

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// CAPossible reports (nil) whether NewCA can create its files under codexHome without
// creating anything: codexHome is set, and the proxy directory, or the nearest of its
// ancestors that exists, is a directory this process may write and enter. The
// executor advertises credentialMasking* only then (executor/environment.go); a
// launch still fails closed if NewCA fails later.
func CAPossible(codexHome string) error {
	if codexHome == "" {
		return errors.New("credmask: CA needs CODEX_HOME")
	}
	dir, err := filepath.Abs(filepath.Join(codexHome, caDirName))
	if err != nil {
		return fmt.Errorf("resolving CODEX_HOME: %w", err)
	}
	for {
		fi, err := os.Stat(dir)
		switch {
		case err == nil && !fi.IsDir():
			return fmt.Errorf("credmask: %s is not a directory", dir)
		case err == nil:
			return writableDir(dir)
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("checking %s: %w", dir, err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return fmt.Errorf("credmask: no existing ancestor of %s", codexHome)
		}
		dir = parent
	}
}
