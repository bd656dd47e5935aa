package executor

import (
	"debug/elf"
	"os"
	"testing"
)

// A dynamically linked binary gets its interpreter and libraries as read grants; every
// grant exists. /bin/true is dynamically linked on every supported distribution.
func TestSandboxRuntimeGrants_Dynamic(t *testing.T) {
	f, err := elf.Open("/bin/true")
	if err != nil {
		t.Fatalf("opening /bin/true: %v", err)
	}
	libs, _ := f.ImportedLibraries()
	f.Close()
	got := sandboxRuntimeGrants("/bin/true")
	if len(got) != 1+len(libs) {
		t.Fatalf("got grants %q, want the interpreter plus %d libraries %q", got, len(libs), libs)
	}
	for _, g := range got {
		if _, err := os.Stat(g); err != nil {
			t.Errorf("grant %s: %v", g, err)
		}
	}
}

func TestSandboxRuntimeGrants_NotELF(t *testing.T) {
	if got := sandboxRuntimeGrants("/etc/hostname"); got != nil {
		t.Fatalf("got %q for a non-ELF file, want nil", got)
	}
	if got := sandboxRuntimeGrants(""); got != nil {
		t.Fatalf("got %q for no executable, want nil", got)
	}
}
