package reexec

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
)

// Point is one way the binary re-enters itself: a hidden command line that runs Run
// instead of the program.
type Point struct {
	// Args is the argv prefix after argv[0] that selects the point (one hidden flag, or
	// a command and a hidden flag). Required.
	Args []string
	// Exact, when set, selects the point only when argv is argv[0] plus Args and
	// nothing more; otherwise the remaining arguments go to Run.
	Exact bool
	// Argv0, when set, also selects the point when basename(argv[0]) is Argv0 (a
	// multi-call alias); then every argument after argv[0] goes to Run, except a
	// leading Args, which is stripped. An Argv0 match wins over any Args match.
	Argv0 string
	// InProcess lets the sandbox inner stage run this point itself, confined, when the
	// sandboxed command is exactly [this executable, Args[0]] (see InProcessFunc);
	// only for one-word Args.
	InProcess bool
	// Run runs the point with the arguments after the selecting ones and returns the
	// process exit code. It must not return while a goroutine it started still writes.
	Run func(args []string) int
}

var (
	mu         sync.Mutex
	points     []Point
	dispatched atomic.Bool
)

// Register adds a re-entry point. Packages register theirs in init (registering runs
// nothing); a point whose Args or Argv0 another point already has panics, as does a
// point without Args or Run.
func Register(p Point) {
	if len(p.Args) == 0 || p.Args[0] == "" || p.Run == nil {
		panic("reexec: Register needs Args and Run")
	}
	if p.InProcess && len(p.Args) != 1 {
		panic(fmt.Sprintf("reexec: in-process point %q must be one flag", p.Args))
	}
	mu.Lock()
	defer mu.Unlock()
	for _, q := range points {
		if slices.Equal(q.Args, p.Args) || (p.Argv0 != "" && q.Argv0 == p.Argv0) {
			panic(fmt.Sprintf("reexec: point %q registered twice", p.Args))
		}
	}
	points = append(points, p)
}

// lookup returns the point args select and the arguments for its Run.
func lookup(args []string) (*Point, []string) {
	mu.Lock()
	defer mu.Unlock()
	if len(args) == 0 {
		return nil, nil
	}
	base := filepath.Base(args[0])
	for i := range points {
		p := &points[i]
		if p.Argv0 != "" && base == p.Argv0 {
			rest := args[1:]
			if len(rest) >= len(p.Args) && slices.Equal(rest[:len(p.Args)], p.Args) {
				rest = rest[len(p.Args):]
			}
			return p, rest
		}
	}
	for i := range points {
		p := &points[i]
		n := len(p.Args) + 1
		if len(args) < n || !slices.Equal(args[1:n], p.Args) || (p.Exact && len(args) != n) {
			continue
		}
		return p, args[n:]
	}
	return nil, nil
}

// Dispatch runs the point args (os.Args) select, if any, and returns handled = true and
// its exit code; otherwise (false, 0). It also records that this process dispatches,
// which Dispatched reports: call it once, first thing in main or TestMain.
func Dispatch(args []string) (handled bool, exitCode int) {
	dispatched.Store(true)
	p, rest := lookup(args)
	if p == nil {
		return false, 0
	}
	return true, p.Run(rest)
}

// Dispatched reports whether this process called Dispatch. Code about to re-enter the
// running binary checks it first: a binary that never dispatches (a test binary whose
// TestMain does not) would run its whole program again instead of the point.
func Dispatched() bool { return dispatched.Load() }

// Main is the first statement of a program's main: it runs the selected point, if any,
// and exits with its code through os.Exit.
func Main() {
	if handled, code := Dispatch(os.Args); handled {
		os.Exit(code)
	}
}

// TestMain is the first statement of a TestMain whose test binary is re-entered: it
// runs the selected point, if any, and ends the process with Exit (see the package doc).
func TestMain() {
	if handled, code := Dispatch(os.Args); handled {
		Exit(code)
	}
}

// InProcessFunc returns the Run of the InProcess point whose flag is flag, bound to
// no arguments, or nil.
func InProcessFunc(flag string) func() int {
	mu.Lock()
	defer mu.Unlock()
	for _, p := range points {
		if p.InProcess && p.Args[0] == flag {
			return func() int { return p.Run(nil) }
		}
	}
	return nil
}

// Points returns the Args of every registered point, in registration order (for tests
// that check a binary links all of its points).
func Points() [][]string {
	mu.Lock()
	defer mu.Unlock()
	out := make([][]string, len(points))
	for i, p := range points {
		out[i] = slices.Clone(p.Args)
	}
	return out
}
