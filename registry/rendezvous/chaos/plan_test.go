package chaos

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestPlan_TriggersAndWindows(t *testing.T) {
	p := NewPlan([]Fault{
		{Kind: KindCut, Sides: SideExecutor, AfterBytes: 100, For: 5 * time.Second},
		{Kind: KindStall, Sides: SideHarness, AfterTime: 10 * time.Second, For: 20 * time.Second},
	}, t0, 1)
	if f := p.Advance(t0); len(f) != 0 {
		t.Fatalf("fired %v at start, want nothing", f)
	}
	if next, ok := p.NextTimer(t0); !ok || !next.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("NextTimer = %v, %v; want start+10s", next, ok)
	}
	if p.Relayed(99) {
		t.Fatal("Relayed(99) says a trigger of 100 bytes is due")
	}
	if f := p.Advance(t0.Add(time.Second)); len(f) != 0 {
		t.Fatalf("fired %v at 99 bytes, want nothing", f)
	}
	if !p.Relayed(1) {
		t.Fatal("Relayed up to 100 bytes does not say the byte trigger is due")
	}
	now := t0.Add(2 * time.Second)
	if f := p.Advance(now); len(f) != 1 || f[0].Kind != KindCut {
		t.Fatalf("at 100 bytes fired %v, want the cut", f)
	}
	if u := p.Until(KindCut, SideExecutor, now); !u.Equal(now.Add(5 * time.Second)) {
		t.Errorf("executor cut until %v, want %v", u, now.Add(5*time.Second))
	}
	if u := p.Until(KindCut, SideHarness, now); !u.IsZero() {
		t.Errorf("harness cut until %v, want not cut", u)
	}
	if u := p.Until(KindCut, SideExecutor, now.Add(5*time.Second)); !u.IsZero() {
		t.Errorf("cut still in force at its end: until %v", u)
	}
	// The stall fires at 10 s and lasts 20 s; the timer then points at its end.
	at := t0.Add(10 * time.Second)
	if f := p.Advance(at); len(f) != 1 || f[0].Kind != KindStall {
		t.Fatalf("at 10 s fired %v, want the stall", f)
	}
	if next, ok := p.NextTimer(at); !ok || !next.Equal(at.Add(20*time.Second)) {
		t.Errorf("NextTimer during the stall = %v, %v; want its end", next, ok)
	}
	if u := p.Until(KindStall, SideHarness, at.Add(19*time.Second)); !u.Equal(at.Add(20 * time.Second)) {
		t.Errorf("stall until %v, want %v", u, at.Add(20*time.Second))
	}
	if f := p.Advance(at.Add(time.Hour)); len(f) != 0 {
		t.Errorf("faults fired twice: %v", f)
	}
	if _, ok := p.NextTimer(at.Add(time.Hour)); ok {
		t.Error("NextTimer after everything ended, want none")
	}
}

func TestPlan_FrameVerdicts(t *testing.T) {
	const n = 20000
	tests := []struct {
		fault Fault
		check func(v Verdict) bool // hit?
	}{
		{Fault{Kind: KindDrop, Sides: SideBoth, Rate: 0.05}, func(v Verdict) bool { return v.Copies == 0 }},
		{Fault{Kind: KindDuplicate, Sides: SideBoth, Rate: 0.05}, func(v Verdict) bool { return v.Copies == 2 }},
		{Fault{Kind: KindReorder, Sides: SideBoth, Rate: 0.05}, func(v Verdict) bool { return v.Reordered && v.Delay == ReorderHold }},
	}
	for _, tt := range tests {
		p := NewPlan([]Fault{tt.fault}, t0, 42)
		p.Advance(t0)
		hits := 0
		for range n {
			if tt.check(p.Frame(SideExecutor, true, t0)) {
				hits++
			}
		}
		// 5 % of 20000 = 1000; binomial sd ≈ 31, so ±150 is a ~5 sd bound.
		if hits < 850 || hits > 1150 {
			t.Errorf("%s: %d hits in %d frames, want about 1000", tt.fault.Kind, hits, n)
		}
		// Control frames are never touched.
		if v := p.Frame(SideExecutor, false, t0); v != (Verdict{Copies: 1}) {
			t.Errorf("%s: control frame verdict %+v, want forward once", tt.fault.Kind, v)
		}
	}
}

func TestPlan_FrameSidesDelayAndWindow(t *testing.T) {
	p := NewPlan([]Fault{
		{Kind: KindDelay, Sides: SideHarness, Delay: 50 * time.Millisecond, For: time.Second},
		{Kind: KindDrop, Sides: SideExecutor, Rate: 1, AfterTime: time.Second},
	}, t0, 7)
	p.Advance(t0)
	if v := p.Frame(SideHarness, false, t0); v.Delay != 50*time.Millisecond || v.Copies != 1 {
		t.Errorf("harness frame during the delay: %+v, want 50ms once", v)
	}
	if v := p.Frame(SideExecutor, true, t0); v != (Verdict{Copies: 1}) {
		t.Errorf("executor frame before its drop fault: %+v, want forward", v)
	}
	later := t0.Add(time.Second)
	p.Advance(later)
	if v := p.Frame(SideHarness, true, later); v != (Verdict{Copies: 1}) {
		t.Errorf("harness frame after the delay window: %+v, want forward", v)
	}
	if v := p.Frame(SideExecutor, true, later); v.Copies != 0 {
		t.Errorf("executor data frame under drop=100%%: %+v, want dropped", v)
	}
}

func TestPlan_SameSeedSameVerdicts(t *testing.T) {
	run := func() []Verdict {
		p := NewPlan([]Fault{{Kind: KindDrop, Sides: SideBoth, Rate: 0.3}, {Kind: KindReorder, Sides: SideBoth, Rate: 0.3}}, t0, 99)
		p.Advance(t0)
		var out []Verdict
		for range 200 {
			out = append(out, p.Frame(SideHarness, true, t0))
		}
		return out
	}
	a, b := run(), run()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("verdict %d differs between two runs with one seed: %+v vs %+v", i, a[i], b[i])
		}
	}
}

func TestPlan_AddBounded(t *testing.T) {
	p := NewPlan(nil, t0, 1)
	for i := range MaxFaults {
		if !p.Add(Fault{Kind: KindDelay, Sides: SideBoth}) {
			t.Fatalf("Add %d refused, want %d accepted", i, MaxFaults)
		}
	}
	if p.Add(Fault{Kind: KindDelay, Sides: SideBoth}) {
		t.Error("Add beyond MaxFaults accepted")
	}
}

func TestLine_DueOrderThenArrival(t *testing.T) {
	var l line
	l.push([]byte("a"), t0.Add(2*time.Millisecond))
	l.push([]byte("b"), t0)
	l.push([]byte("c"), t0)
	l.push([]byte("d"), t0.Add(time.Millisecond))
	if _, ok := l.pop(t0.Add(-time.Nanosecond)); ok {
		t.Fatal("popped a frame before it was due")
	}
	var got string
	for {
		b, ok := l.pop(t0.Add(time.Hour))
		if !ok {
			break
		}
		got += string(b)
	}
	if got != "bcda" {
		t.Errorf("delivery order %q, want %q", got, "bcda")
	}
	if _, ok := l.next(); ok || l.len() != 0 {
		t.Error("line not empty after draining")
	}
}
