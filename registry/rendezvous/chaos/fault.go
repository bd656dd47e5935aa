package chaos

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Side is a set of link sides: the executor's sockets, the harnesses' sockets, or both.
type Side uint8

// Sides.
const (
	SideExecutor Side = 1 << iota
	SideHarness
	SideBoth = SideExecutor | SideHarness
)

// String returns "executor", "harness" or "both".
func (s Side) String() string {
	switch s {
	case SideExecutor:
		return "executor"
	case SideHarness:
		return "harness"
	case SideBoth:
		return "both"
	}
	return "none"
}

// Kind is what a fault does.
type Kind uint8

// Fault kinds.
const (
	// KindCut drops the side's connections (TCP close) and refuses its new ones (HTTP
	// 502) for Fault.For.
	KindCut Kind = iota + 1
	// KindStall freezes the side's connections for Fault.For: nothing is read or written,
	// no Pong answered, no RST sent; afterwards they carry on with what was queued.
	KindStall
	// KindDelay holds every frame Fault.Delay before forwarding it (latency; throughput is
	// kept, order too).
	KindDelay
	// KindDrop discards data frames with probability Fault.Rate.
	KindDrop
	// KindDuplicate forwards data frames twice with probability Fault.Rate.
	KindDuplicate
	// KindReorder holds data frames back by ReorderHold with probability Fault.Rate, so
	// later frames overtake them.
	KindReorder
)

var kindNames = [...]string{KindCut: "cut", KindStall: "stall", KindDelay: "delay", KindDrop: "drop", KindDuplicate: "dup", KindReorder: "reorder"}

// String returns the spec keyword of the kind ("cut", "stall", …).
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "unknown"
}

// Fault is one scheduled or injected fault. Its zero trigger (AfterTime and AfterBytes
// both 0) fires at once.
type Fault struct {
	Kind  Kind
	Sides Side
	// AfterTime fires the fault this long after the proxy started (at=10s).
	AfterTime time.Duration
	// AfterBytes fires the fault once this many bytes of frames were relayed, both
	// directions and all links together (at=16MiB).
	AfterBytes int64
	// For is how long a cut or stall lasts (required), or how long a delay, drop,
	// duplicate or reorder fault stays active (0: until the proxy stops).
	For time.Duration
	// Delay is the added latency of a KindDelay fault.
	Delay time.Duration
	// Rate is the probability, in [0, 1], that a drop, duplicate or reorder fault hits
	// one data frame.
	Rate float64
}

// Errors of ParseFault.
var (
	ErrSpecSyntax = errors.New("chaos: invalid fault spec")
)

// ParseFault parses one fault spec: space-separated key=value pairs, exactly one of them an
// action.
//
//	at=10s | at=16MiB         trigger: time since start, or bytes relayed (B, KiB, MiB,
//	                          GiB, KB, MB, GB); absent: at once
//	side=executor|harness|both  default both
//	cut=5s | stall=60s        the action and how long it lasts
//	delay=50ms                added latency per frame
//	drop=5% | dup=5% | reorder=5%   probability per data frame (also 0.05)
//	for=30s                   how long delay/drop/dup/reorder stay active (default: ever)
//
// Example: "at=16MiB side=executor cut=5s".
func ParseFault(spec string) (Fault, error) {
	if len(spec) > MaxSpecLength {
		return Fault{}, fmt.Errorf("%w: longer than %d bytes", ErrSpecSyntax, MaxSpecLength)
	}
	f := Fault{Sides: SideBoth}
	seen := map[string]bool{}
	for _, field := range strings.Fields(spec) {
		key, val, ok := strings.Cut(field, "=")
		if !ok || val == "" {
			return Fault{}, fmt.Errorf("%w: %q is not key=value", ErrSpecSyntax, field)
		}
		if seen[key] {
			return Fault{}, fmt.Errorf("%w: %q given twice", ErrSpecSyntax, key)
		}
		seen[key] = true
		if err := f.set(key, val); err != nil {
			return Fault{}, err
		}
	}
	if f.Kind == 0 {
		return Fault{}, fmt.Errorf("%w: no action (cut, stall, delay, drop, dup or reorder)", ErrSpecSyntax)
	}
	if (f.Kind == KindCut || f.Kind == KindStall) && seen["for"] {
		return Fault{}, fmt.Errorf("%w: %s takes its duration as %s=D, not for=", ErrSpecSyntax, f.Kind, f.Kind)
	}
	return f, nil
}

// set applies one key=value pair.
func (f *Fault) set(key, val string) error {
	var err error
	switch key {
	case "at":
		if d, derr := parseDuration(val); derr == nil {
			f.AfterTime = d
		} else {
			f.AfterBytes, err = parseSize(val)
		}
	case "side":
		f.Sides, err = parseSide(val)
	case "for":
		f.For, err = parseDuration(val)
	case "cut", "stall":
		err = f.setKind(map[string]Kind{"cut": KindCut, "stall": KindStall}[key])
		if err == nil {
			f.For, err = parseDuration(val)
		}
		if err == nil && f.For == 0 {
			err = fmt.Errorf("%w: %s needs a duration above 0", ErrSpecSyntax, key)
		}
	case "delay":
		if err = f.setKind(KindDelay); err == nil {
			f.Delay, err = parseDuration(val)
		}
	case "drop", "dup", "reorder":
		if err = f.setKind(map[string]Kind{"drop": KindDrop, "dup": KindDuplicate, "reorder": KindReorder}[key]); err == nil {
			f.Rate, err = parseRate(val)
		}
	default:
		return fmt.Errorf("%w: unknown key %q", ErrSpecSyntax, key)
	}
	return err
}

func (f *Fault) setKind(k Kind) error {
	if f.Kind != 0 {
		return fmt.Errorf("%w: more than one action", ErrSpecSyntax)
	}
	f.Kind = k
	return nil
}

// String formats f as a spec ParseFault accepts.
func (f Fault) String() string {
	var b strings.Builder
	switch {
	case f.AfterBytes > 0:
		fmt.Fprintf(&b, "at=%dB ", f.AfterBytes)
	case f.AfterTime > 0:
		fmt.Fprintf(&b, "at=%s ", f.AfterTime)
	}
	fmt.Fprintf(&b, "side=%s ", f.Sides)
	switch f.Kind {
	case KindCut, KindStall:
		fmt.Fprintf(&b, "%s=%s", f.Kind, f.For)
		return b.String()
	case KindDelay:
		fmt.Fprintf(&b, "delay=%s", f.Delay)
	default:
		fmt.Fprintf(&b, "%s=%s", f.Kind, strconv.FormatFloat(f.Rate, 'g', -1, 64))
	}
	if f.For > 0 {
		fmt.Fprintf(&b, " for=%s", f.For)
	}
	return b.String()
}

func parseSide(s string) (Side, error) {
	switch s {
	case "executor":
		return SideExecutor, nil
	case "harness":
		return SideHarness, nil
	case "both":
		return SideBoth, nil
	}
	return 0, fmt.Errorf("%w: side must be executor, harness or both, not %q", ErrSpecSyntax, s)
}

func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > MaxDuration {
		return 0, fmt.Errorf("%w: %q is not a duration between 0 and %s", ErrSpecSyntax, s, MaxDuration)
	}
	return d, nil
}

// sizeUnits are the size suffixes, longest first so "MiB" is tried before "B".
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1},
}

// maxSize bounds a byte trigger (1 PiB), far above any test and safe from overflow.
const maxSize = 1 << 50

func parseSize(s string) (int64, error) {
	for _, u := range sizeUnits {
		num, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n <= 0 || n > maxSize/u.mult {
			break
		}
		return n * u.mult, nil
	}
	return 0, fmt.Errorf("%w: at=%q is neither a duration (10s) nor a size (16MiB)", ErrSpecSyntax, s)
}

func parseRate(s string) (float64, error) {
	pct, isPct := strings.CutSuffix(s, "%")
	r, err := strconv.ParseFloat(pct, 64)
	if isPct {
		r /= 100
	}
	if err != nil || !(r >= 0 && r <= 1) {
		return 0, fmt.Errorf("%w: rate %q must be between 0 and 1 (or 0%% and 100%%)", ErrSpecSyntax, s)
	}
	return r, nil
}
