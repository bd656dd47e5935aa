package process

import "testing"

// granted reports whether ch is closed (a grant), without blocking.
func granted(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestBudget_AdmitQueueGrant: under its total the budget admits at once; at it readers
// queue in arrival order; a release that brings it under the total grants every queued
// reader one read, even after another read filled it again; a reader arriving while
// readers are queued queues behind them.
func TestBudget_AdmitQueueGrant(t *testing.T) {
	b := NewBudget(100)
	var a, c, d budgetTicket
	if ok, _ := b.admit(&a); !ok {
		t.Fatal("admit on an empty budget: refused")
	}
	b.charge(100)
	okA, waitA := b.admit(&a)
	okC, waitC := b.admit(&c)
	if okA || okC || waitA == nil || waitC == nil {
		t.Fatalf("admit at the total: got %v, %v; want both queued", okA, okC)
	}
	if got := b.Queued(); got != 2 {
		t.Fatalf("queued %d, want 2", got)
	}
	if ok, again := b.admit(&a); ok || again != waitA {
		t.Fatal("a second admit of a queued ticket: not the same wait")
	}

	b.release(10) // 90 < 100: both granted
	if !granted(waitA) || !granted(waitC) || b.Queued() != 0 {
		t.Fatalf("after a release under the total: granted %v %v, queued %d; want both, 0", granted(waitA), granted(waitC), b.Queued())
	}
	if ok, _ := b.admit(&a); !ok {
		t.Fatal("granted a: refused")
	}
	b.charge(50) // a read 140/100: over again
	if ok, _ := b.admit(&c); !ok {
		t.Fatal("granted c refused after a's read filled the budget again: c would starve")
	}
	if ok, _ := b.admit(&a); ok {
		t.Fatal("a admitted again over the total without a grant")
	}
	if ok, _ := b.admit(&d); ok {
		t.Fatal("d admitted over the total")
	}
	if got := b.Queued(); got != 2 {
		t.Fatalf("queued %d, want 2 (a, then d)", got)
	}
	if b.queue[0] != &a || b.queue[1] != &d {
		t.Fatal("queue order is not arrival order")
	}
	b.release(140)
	if got := b.Used(); got != 0 {
		t.Fatalf("used %d after releasing everything, want 0", got)
	}
	if ok, _ := b.admit(&a); !ok {
		t.Fatal("a refused after everything was released")
	}
	if ok, _ := b.admit(&d); !ok {
		t.Fatal("d refused after everything was released")
	}
}

// TestBudget_ReleaseAtTotalGrantsNothing: a release that leaves the budget at its total
// grants nobody (the bound is "at or over").
func TestBudget_ReleaseAtTotalGrantsNothing(t *testing.T) {
	b := NewBudget(100)
	b.charge(110)
	var a budgetTicket
	_, wait := b.admit(&a)
	b.release(10)
	if granted(wait) {
		t.Fatal("granted at exactly the total")
	}
	b.release(1)
	if !granted(wait) {
		t.Fatal("not granted under the total")
	}
}

// TestBudget_Cancel: a cancelled ticket leaves the queue and loses an unused grant; a
// cancel of a ticket that is neither queued nor granted changes nothing.
func TestBudget_Cancel(t *testing.T) {
	b := NewBudget(100)
	b.charge(100)
	var a, c budgetTicket
	b.admit(&a)
	b.admit(&c)
	b.cancel(&a)
	if b.Queued() != 1 || b.queue[0] != &c {
		t.Fatalf("queued %d after cancelling a, want only c", b.Queued())
	}
	b.release(1)
	b.charge(1)  // full again
	b.cancel(&c) // drops c's grant
	if ok, _ := b.admit(&c); ok {
		t.Fatal("a cancelled grant was used")
	}
	var d budgetTicket
	b.cancel(&d)
	if b.Queued() != 1 {
		t.Fatalf("queued %d, want 1 (c)", b.Queued())
	}
}

// TestBudget_Nil: a nil Budget (a released-mode process) admits everything.
func TestBudget_Nil(t *testing.T) {
	var b *Budget
	var a budgetTicket
	b.charge(1 << 30)
	if ok, _ := b.admit(&a); !ok {
		t.Fatal("nil budget refused")
	}
	b.release(1 << 30)
	b.cancel(&a)
}

// TestNewBudget_Default: total ≤ 0 means the default.
func TestNewBudget_Default(t *testing.T) {
	if got := NewBudget(0).Total(); got != DefaultMaxUnackedTotalBytes {
		t.Fatalf("NewBudget(0).Total() = %d, want %d", got, DefaultMaxUnackedTotalBytes)
	}
}
