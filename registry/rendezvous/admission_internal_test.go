package rendezvous

import (
	"errors"
	"testing"
	"time"
)

// TestAdmission_FailureLedger: the failure budget pauses a subject, in-flight handshakes
// are bounded by the remaining budget, one failure is forgiven per
// HarnessFailureForgiveness, and subjects and environments are independent. Pure: the
// clock is an argument.
func TestAdmission_FailureLedger(t *testing.T) {
	a := newAdmission(MaxHarnessSockets, MaxHarnessSocketsPerSubject)
	t0 := time.Unix(1_000_000, 0)
	// HarnessFailureBudget handshakes in flight at once; the next one waits.
	for i := range HarnessFailureBudget {
		if ok, _ := a.startHandshake("env", "abuser", t0); !ok {
			t.Fatalf("handshake %d: refused, want a slot", i)
		}
	}
	ok, wait := a.startHandshake("env", "abuser", t0)
	if ok || wait == nil {
		t.Fatalf("handshake %d: got ok=%v wait=%v, want to wait for a slot", HarnessFailureBudget+1, ok, wait != nil)
	}
	// Each failure frees a slot and shrinks the budget.
	paused := false
	for i := range HarnessFailureBudget {
		paused = a.endHandshake("env", "abuser", true, t0)
		if i == 0 {
			select {
			case <-wait:
			default:
				t.Errorf("a settled handshake did not wake the waiter")
			}
		}
	}
	if !paused {
		t.Errorf("the budget-th failure did not report the pause")
	}
	if ok, wait := a.startHandshake("env", "abuser", t0); ok || wait != nil {
		t.Errorf("paused subject: got ok=%v wait=%v, want refused", ok, wait != nil)
	}
	if err := a.allowed("env", "abuser", t0); !errors.Is(err, ErrSubjectPaused) {
		t.Errorf("allowed(paused): got %v, want ErrSubjectPaused", err)
	}
	if err := a.admit(Claims{EnvironmentID: "env", Subject: "abuser", Nonce: "n1", Expires: t0.Add(time.Minute)}, t0); !errors.Is(err, ErrSubjectPaused) {
		t.Errorf("admit(paused): got %v, want ErrSubjectPaused", err)
	}
	for _, other := range [][2]string{{"env", "legit"}, {"env-2", "abuser"}} {
		if err := a.allowed(other[0], other[1], t0); err != nil {
			t.Errorf("allowed(%s, %s): got %v, want nil", other[0], other[1], err)
		}
	}
	// One failure forgiven per interval: one handshake at a time comes back.
	t1 := t0.Add(HarnessFailureForgiveness)
	if err := a.allowed("env", "abuser", t1.Add(-time.Second)); err == nil {
		t.Errorf("allowed just before the first forgiveness: got nil, want paused")
	}
	if ok, _ := a.startHandshake("env", "abuser", t1); !ok {
		t.Fatalf("after one forgiveness: refused, want one slot")
	}
	if ok, wait := a.startHandshake("env", "abuser", t1); ok || wait == nil {
		t.Errorf("second handshake after one forgiveness: got ok=%v, want to wait", ok)
	}
	a.endHandshake("env", "abuser", false, t1) // success: nothing forgiven, nothing charged
	// All forgiven after budget intervals; the entry is then gone.
	if err := a.allowed("env", "abuser", t0.Add(HarnessFailureBudget*HarnessFailureForgiveness)); err != nil {
		t.Errorf("after %d forgiveness intervals: got %v, want nil", HarnessFailureBudget, err)
	}
	if ok, _ := a.startHandshake("env", "abuser", t0.Add(HarnessFailureBudget*HarnessFailureForgiveness)); ok {
		a.endHandshake("env", "abuser", false, t0)
	}
	if n := len(a.subjects); n != 0 {
		t.Errorf("ledger entries after everything settled and was forgiven: got %d, want 0", n)
	}
}

// TestAdmission_URLsAndCaps: a nonce admits once (until its expiry sweeps it); the
// environment and per-subject caps hold and release frees them.
func TestAdmission_URLsAndCaps(t *testing.T) {
	a := newAdmission(3, 2)
	t0 := time.Unix(1_000_000, 0)
	c := func(subject, nonce string) Claims {
		return Claims{Role: RoleHarness, EnvironmentID: "env", Subject: subject, Nonce: nonce, Expires: t0.Add(HarnessURLTTL)}
	}
	if err := a.admit(c("a", "n1"), t0); err != nil {
		t.Fatal(err)
	}
	if err := a.admit(c("a", "n1"), t0); !errors.Is(err, ErrURLUsed) {
		t.Errorf("same nonce again: got %v, want ErrURLUsed", err)
	}
	if err := a.admit(c("a", "n2"), t0); err != nil {
		t.Fatal(err)
	}
	if err := a.admit(c("a", "n3"), t0); !errors.Is(err, ErrTooManySockets) {
		t.Errorf("third socket of one subject (cap 2): got %v, want ErrTooManySockets", err)
	}
	if err := a.admit(c("b", "n4"), t0); err != nil {
		t.Fatal(err)
	}
	if err := a.admit(c("c", "n5"), t0); !errors.Is(err, ErrTooManySockets) {
		t.Errorf("fourth socket of the environment (cap 3): got %v, want ErrTooManySockets", err)
	}
	a.release("env", "a")
	if err := a.admit(c("c", "n5"), t0); err != nil {
		t.Errorf("after a release: got %v, want admitted (a refused nonce stays usable)", err)
	}
	later := t0.Add(2 * HarnessURLTTL)
	if err := a.admit(Claims{EnvironmentID: "env2", Subject: "z", Nonce: "n9", Expires: later.Add(time.Minute)}, later); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.used["n1"]; ok {
		t.Errorf("expired nonce still remembered after the sweep")
	}
}
