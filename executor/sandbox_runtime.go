package executor

import (
	"debug/elf"
	"os"
	"path/filepath"
	"runtime"
)

// libSearchDirs are where the dynamic loader finds a DT_NEEDED library when no
// ld.so.cache is visible (glibc's trusted directories on Debian-style and other
// layouts), searched in order.
var libSearchDirs = map[string][]string{
	"amd64": {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"},
	"arm64": {"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"},
}

// sandboxRuntimeGrants returns the files a dynamically linked executor binary needs
// readable to start inside a sandbox whose profile does not grant the platform roots:
// its ELF interpreter and its DT_NEEDED libraries (spec/sandbox.md §2.1 step 5 grants
// the binary itself; a static CGO_ENABLED=0 build needs nothing more and gets nil).
// Unresolvable libraries are skipped: the stage then fails to start, and the request
// reports that failure, never a wider sandbox.
func sandboxRuntimeGrants(exe string) []string {
	if exe == "" || runtime.GOOS != "linux" {
		return nil
	}
	f, err := elf.Open(exe)
	if err != nil {
		return nil
	}
	defer f.Close()
	var interp string
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err == nil {
				interp = string(trimNUL(b))
			}
		}
	}
	if interp == "" {
		return nil // static binary
	}
	grants := []string{interp}
	libs, _ := f.ImportedLibraries()
	dirs := append([]string{filepath.Dir(interp)}, libSearchDirs[runtime.GOARCH]...)
	for _, lib := range libs {
		for _, d := range dirs {
			cand := filepath.Join(d, lib)
			if st, err := os.Stat(cand); err == nil && st.Mode().IsRegular() {
				grants = append(grants, cand)
				break
			}
		}
	}
	return grants
}

func trimNUL(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}
