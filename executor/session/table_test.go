package session_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/execlab/executor/executor/session"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type fakeState struct{ closed atomic.Int32 }

func (f *fakeState) Close() { f.closed.Add(1) }

func TestTable_ResumeRules(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := session.NewTable[*fakeState](30 * time.Second)
		defer r.Close()
		connA, connB := new(int), new(int)
		st := &fakeState{}
		s, err := r.Create(connA, st)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.ID) != 36 || s.ID[14] != '4' {
			t.Fatalf("got id %q, want a UUIDv4", s.ID)
		}
		if _, err := r.Resume(s.ID, connB); !errors.Is(err, session.ErrAttached) {
			t.Fatalf("resume of attached session: got %v, want ErrAttached", err)
		}
		if _, err := r.Resume("nope", connB); !errors.Is(err, session.ErrUnknownSession) {
			t.Fatalf("resume of unknown: got %v, want ErrUnknownSession", err)
		}
		r.Detach(s, connA)
		time.Sleep(29 * time.Second)
		got, err := r.Resume(s.ID, connB)
		if err != nil || got != s {
			t.Fatalf("resume within TTL: got %v, %v", got, err)
		}
		if !r.AttachedTo(s, connB) || r.AttachedTo(s, connA) {
			t.Fatal("attachment did not move to connB")
		}
		// A stale detach from the old owner changes nothing.
		r.Detach(s, connA)
		time.Sleep(time.Minute)
		if st.closed.Load() != 0 || r.Len() != 1 {
			t.Fatalf("session closed by stale detach")
		}
		r.Detach(s, connB)
		time.Sleep(30*time.Second + time.Millisecond)
		synctest.Wait()
		if st.closed.Load() != 1 || r.Len() != 0 {
			t.Fatalf("got closed=%d len=%d after TTL, want 1 and 0", st.closed.Load(), r.Len())
		}
		if _, err := r.Resume(s.ID, connA); !errors.Is(err, session.ErrUnknownSession) {
			t.Fatalf("resume after expiry: got %v, want ErrUnknownSession", err)
		}
	})
}

func TestTable_FreshDeadlinePerDetach(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := session.NewTable[*fakeState](10 * time.Second)
		defer r.Close()
		a, b := new(int), new(int)
		st := &fakeState{}
		s, _ := r.Create(a, st)
		r.Detach(s, a)
		time.Sleep(9 * time.Second)
		if _, err := r.Resume(s.ID, b); err != nil {
			t.Fatal(err)
		}
		r.Detach(s, b)
		time.Sleep(9 * time.Second)
		synctest.Wait()
		if st.closed.Load() != 0 {
			t.Fatal("session expired on the first detach's deadline")
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if st.closed.Load() != 1 {
			t.Fatal("session did not expire on the second deadline")
		}
	})
}

func TestTable_CloseClosesAll(t *testing.T) {
	r := session.NewTable[*fakeState](time.Hour)
	st1, st2 := &fakeState{}, &fakeState{}
	s1, _ := r.Create(new(int), st1)
	_, _ = r.Create(new(int), st2)
	r.Detach(s1, nil) // not the owner: no-op
	r.Close()
	if st1.closed.Load() != 1 || st2.closed.Load() != 1 {
		t.Fatalf("got closes %d,%d, want 1,1", st1.closed.Load(), st2.closed.Load())
	}
	if _, err := r.Create(new(int), &fakeState{}); !errors.Is(err, session.ErrClosed) {
		t.Fatalf("create after close: got %v, want ErrClosed", err)
	}
}
