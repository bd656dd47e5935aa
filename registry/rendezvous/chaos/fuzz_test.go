package chaos

import "testing"

// FuzzParseFault: the spec parser never panics, and whatever it accepts formats to a spec
// that parses back to the same fault.
func FuzzParseFault(f *testing.F) {
	for _, s := range []string{"at=16MiB side=executor cut=5s", "drop=5% for=30s", "delay=1ms", "reorder=0.1 at=3s side=harness"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		x, err := ParseFault(spec)
		if err != nil {
			return
		}
		y, err := ParseFault(x.String())
		if err != nil || y != x {
			t.Fatalf("ParseFault(%q) = %+v; its String %q parses to %+v, %v", spec, x, x.String(), y, err)
		}
	})
}
