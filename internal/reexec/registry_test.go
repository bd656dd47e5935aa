package reexec

import (
	"slices"
	"testing"
)

// withPoints runs f with only ps registered, then restores the registry.
func withPoints(t *testing.T, ps []Point, f func()) {
	t.Helper()
	mu.Lock()
	saved := points
	points = nil
	mu.Unlock()
	defer func() {
		mu.Lock()
		points = saved
		mu.Unlock()
	}()
	for _, p := range ps {
		Register(p)
	}
	f()
}

func TestDispatch_Selection(t *testing.T) {
	var got []string
	rec := func(name string, code int) func([]string) int {
		return func(args []string) int {
			got = append([]string{name}, args...)
			return code
		}
	}
	ps := []Point{
		{Args: []string{"--stage"}, Argv0: "multi-call", Run: rec("stage", 3)},
		{Args: []string{"--guard"}, Exact: true, Run: rec("guard", 4)},
		{Args: []string{"bench", "--helper"}, Run: rec("bench", 5)},
		{Args: []string{"--fs"}, InProcess: true, Run: rec("fs", 6)},
	}
	withPoints(t, ps, func() {
		for _, c := range []struct {
			args []string
			want []string // nil: not handled
			code int
		}{
			{[]string{"/bin/x", "--stage", "a", "--", "b"}, []string{"stage", "a", "--", "b"}, 3},
			{[]string{"/some/multi-call", "--", "b"}, []string{"stage", "--", "b"}, 3},
			{[]string{"multi-call", "--stage", "--", "b"}, []string{"stage", "--", "b"}, 3},
			{[]string{"multi-call", "--fs"}, []string{"stage", "--fs"}, 3}, // the alias wins
			{[]string{"multi-call"}, []string{"stage"}, 3},
			{[]string{"x", "--guard"}, []string{"guard"}, 4},
			{[]string{"x", "--guard", "more"}, nil, 0}, // Exact
			{[]string{"x", "bench", "--helper", "y"}, []string{"bench", "y"}, 5},
			{[]string{"x", "bench"}, nil, 0},
			{[]string{"x", "bench", "--quick"}, nil, 0},
			{[]string{"x", "--fs"}, []string{"fs"}, 6},
			{[]string{"x", "serve", "--stage"}, nil, 0},
			{[]string{"x"}, nil, 0},
			{nil, nil, 0},
		} {
			got = nil
			handled, code := Dispatch(c.args)
			if handled != (c.want != nil) || code != c.code || !slices.Equal(got, c.want) {
				t.Errorf("Dispatch(%q) = (%v, %d) running %q, want (%v, %d) running %q",
					c.args, handled, code, got, c.want != nil, c.code, c.want)
			}
		}
		if !Dispatched() {
			t.Errorf("Dispatched() = false after Dispatch")
		}
		got = nil
		if fn := InProcessFunc("--fs"); fn == nil || fn() != 6 || !slices.Equal(got, []string{"fs"}) {
			t.Errorf("InProcessFunc(--fs): got a function running %q, want the fs point", got)
		}
		for _, flag := range []string{"--stage", "--guard", "bench", "--nope"} {
			if InProcessFunc(flag) != nil {
				t.Errorf("InProcessFunc(%q) != nil, want nil (not an in-process point)", flag)
			}
		}
	})
}

func TestRegister_Rejects(t *testing.T) {
	run := func([]string) int { return 0 }
	for name, ps := range map[string][]Point{
		"no args":         {{Run: run}},
		"empty flag":      {{Args: []string{""}, Run: run}},
		"no run":          {{Args: []string{"--a"}}},
		"duplicate args":  {{Args: []string{"--a"}, Run: run}, {Args: []string{"--a"}, Run: run}},
		"duplicate argv0": {{Args: []string{"--a"}, Argv0: "m", Run: run}, {Args: []string{"--b"}, Argv0: "m", Run: run}},
		"two-word inproc": {{Args: []string{"a", "--b"}, InProcess: true, Run: run}},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Register did not panic")
				}
			}()
			withPoints(t, ps, func() {})
		})
	}
}
