package chaos

import (
	"errors"
	"testing"
	"time"
)

func TestParseFault_Valid(t *testing.T) {
	tests := []struct {
		spec string
		want Fault
	}{
		{"at=16MiB side=executor cut=5s", Fault{Kind: KindCut, Sides: SideExecutor, AfterBytes: 16 << 20, For: 5 * time.Second}},
		{"at=1m side=harness stall=60s", Fault{Kind: KindStall, Sides: SideHarness, AfterTime: time.Minute, For: time.Minute}},
		{"delay=50ms", Fault{Kind: KindDelay, Sides: SideBoth, Delay: 50 * time.Millisecond}},
		{"drop=5% for=30s side=both", Fault{Kind: KindDrop, Sides: SideBoth, Rate: 0.05, For: 30 * time.Second}},
		{"dup=0.5", Fault{Kind: KindDuplicate, Sides: SideBoth, Rate: 0.5}},
		{"reorder=100% at=1GB", Fault{Kind: KindReorder, Sides: SideBoth, Rate: 1, AfterBytes: 1e9}},
		{"at=4096B cut=1s", Fault{Kind: KindCut, Sides: SideBoth, AfterBytes: 4096, For: time.Second}},
	}
	for _, tt := range tests {
		got, err := ParseFault(tt.spec)
		if err != nil {
			t.Errorf("ParseFault(%q): %v", tt.spec, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseFault(%q) = %+v, want %+v", tt.spec, got, tt.want)
		}
		// String round-trips.
		again, err := ParseFault(got.String())
		if err != nil || again != got {
			t.Errorf("ParseFault(%q.String() = %q) = %+v, %v; want %+v", tt.spec, got.String(), again, err, got)
		}
	}
}

func TestParseFault_Invalid(t *testing.T) {
	for _, spec := range []string{
		"", "side=executor", "cut=5s stall=5s", "cut=0s", "cut=-1s", "cut=5s for=3s", "drop=101%",
		"drop=-1", "drop=NaN", "at=16XB cut=1s", "at=0B cut=1s", "side=left cut=1s", "cut", "cut=",
		"cut=1s cut=2s", "bogus=1 cut=1s", "delay=25h", "at=2000000PiB cut=1s",
	} {
		if f, err := ParseFault(spec); !errors.Is(err, ErrSpecSyntax) {
			t.Errorf("ParseFault(%q) = %+v, %v; want ErrSpecSyntax", spec, f, err)
		}
	}
}
