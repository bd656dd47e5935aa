package rendezvous

import (
	"errors"
	"sync"
	"time"
)

// Admission refusals (HTTP status in parentheses). Callers branch on them: registry/server
// answers connect with 429 rate_limited for ErrSubjectPaused.
var (
	// ErrURLUsed: the signed harness URL already opened a socket; every URL opens one (401,
	// which the released harness answers by fetching a fresh bundle).
	ErrURLUsed = errors.New("rendezvous: harness url already used")
	// ErrTooManySockets: the environment, or the subject within it, holds its maximum of
	// open harness sockets (429).
	ErrTooManySockets = errors.New("rendezvous: too many harness sockets")
	// ErrSubjectPaused: the subject's harness streams failed HarnessFailureBudget times in
	// this environment; it is refused until one failure is forgiven (429).
	ErrSubjectPaused = errors.New("rendezvous: harness token paused after failed streams")
)

// admission decides which harness sockets the Hub admits and keeps the per-subject failure
// ledger (package doc, Admission). It is a leaf: its methods take only mu and call nothing.
type admission struct {
	maxSockets, maxPerSubject int

	// mu guards the fields below: upgrades, socket ends, failures and connect's Allowed
	// race on them.
	mu sync.Mutex
	// used maps the nonce of every harness URL that opened a socket to the URL's expiry:
	// a URL opens at most one socket. Expired entries are swept every HarnessURLTTL.
	used      map[string]time.Time
	nextSweep time.Time
	// envSockets counts open harness sockets per environment.
	envSockets map[string]int
	// subjects holds per (environment, subject) sockets and failures; an entry with
	// neither is deleted.
	subjects map[subjectKey]*subjectState
}

type subjectKey struct{ env, subject string }

// subjectState is one subject's standing in one environment.
type subjectState struct {
	sockets int
	// handshakes counts the subject's harness handshakes forwarded to the executor and not
	// yet settled (executor data: success; executor reset: failure; socket end). At most
	// HarnessFailureBudget - failures are in flight, so even a burst on many open sockets
	// cannot cause more failed streams than the budget allows.
	handshakes int
	// room is closed and replaced when a handshake settles, waking harness read loops
	// waiting for a slot; nil when nobody waits.
	room chan struct{}
	// failures is a leaky bucket: one failure leaks out per HarnessFailureForgiveness,
	// counted from leakFrom. At HarnessFailureBudget the subject is paused.
	failures int
	leakFrom time.Time
}

func newAdmission(maxSockets, maxPerSubject int) *admission {
	return &admission{
		maxSockets: maxSockets, maxPerSubject: maxPerSubject,
		used: make(map[string]time.Time), envSockets: make(map[string]int),
		subjects: make(map[subjectKey]*subjectState),
	}
}

// leakLocked forgives the failures whose time has come.
func (st *subjectState) leakLocked(now time.Time) {
	if st.failures == 0 {
		return
	}
	n := int(now.Sub(st.leakFrom) / HarnessFailureForgiveness)
	if n <= 0 {
		return
	}
	if n >= st.failures {
		st.failures = 0
		return
	}
	st.failures -= n
	st.leakFrom = st.leakFrom.Add(time.Duration(n) * HarnessFailureForgiveness)
}

// pausedLocked reports whether the subject is refused for failures.
func (a *admission) pausedLocked(k subjectKey, now time.Time) bool {
	st := a.subjects[k]
	if st == nil {
		return false
	}
	st.leakLocked(now)
	a.tidyLocked(k, st)
	return st.failures >= HarnessFailureBudget
}

func (a *admission) tidyLocked(k subjectKey, st *subjectState) {
	if st.sockets == 0 && st.failures == 0 && st.handshakes == 0 && st.room == nil {
		delete(a.subjects, k)
	}
}

// allowed reports whether a harness of subject may connect to env now (nil), or why not.
func (a *admission) allowed(env, subject string, now time.Time) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pausedLocked(subjectKey{env, subject}, now) {
		return ErrSubjectPaused
	}
	return nil
}

// admit checks a verified harness URL and reserves its socket slot; the caller must call
// release exactly once when admit returned nil and the socket ends (or never opens).
func (a *admission) admit(c Claims, now time.Time) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !now.Before(a.nextSweep) {
		for n, exp := range a.used {
			if !now.Before(exp) {
				delete(a.used, n)
			}
		}
		a.nextSweep = now.Add(HarnessURLTTL)
	}
	if _, ok := a.used[c.Nonce]; ok {
		return ErrURLUsed
	}
	k := subjectKey{c.EnvironmentID, c.Subject}
	if a.pausedLocked(k, now) {
		return ErrSubjectPaused
	}
	st := a.subjects[k]
	if a.envSockets[c.EnvironmentID] >= a.maxSockets || (st != nil && st.sockets >= a.maxPerSubject) {
		return ErrTooManySockets
	}
	// The nonce is spent only by an admitted upgrade: a refused one may be retried.
	a.used[c.Nonce] = c.Expires
	if st == nil {
		st = a.subjectLocked(k)
	}
	st.sockets++
	a.envSockets[c.EnvironmentID]++
	return nil
}

// release frees the slot admit reserved.
func (a *admission) release(env, subject string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.envSockets[env]--; a.envSockets[env] <= 0 {
		delete(a.envSockets, env)
	}
	k := subjectKey{env, subject}
	if st := a.subjects[k]; st != nil {
		st.sockets--
		a.tidyLocked(k, st)
	}
}

// startHandshake takes one in-flight handshake slot of subject in env (ok true), or
// reports that the subject is paused (ok false, wait nil), or returns a channel closed when
// a slot may have freed (ok false): the caller waits on it and calls again.
func (a *admission) startHandshake(env, subject string, now time.Time) (ok bool, wait <-chan struct{}) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := subjectKey{env, subject}
	st := a.subjectLocked(k)
	st.leakLocked(now)
	room := HarnessFailureBudget - st.failures
	switch {
	case room <= 0:
		a.tidyLocked(k, st)
		return false, nil
	case st.handshakes < room:
		st.handshakes++
		return true, nil
	}
	if st.room == nil {
		st.room = make(chan struct{})
	}
	return false, st.room
}

// endHandshake settles a slot taken by startHandshake; failed records a failed stream.
// It reports whether this failure paused the subject (for a warning).
func (a *admission) endHandshake(env, subject string, failed bool, now time.Time) (paused bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	k := subjectKey{env, subject}
	st := a.subjects[k]
	if st == nil {
		return false // unreachable: a slot holder keeps the entry
	}
	st.handshakes--
	if st.room != nil {
		close(st.room)
		st.room = nil
	}
	if failed {
		paused = a.failLocked(st, now)
	}
	a.tidyLocked(k, st)
	return paused
}

// failure records one failed harness stream of subject in env that held no handshake slot
// (a frame-order violation). It reports whether this failure paused the subject.
func (a *admission) failure(env, subject string, now time.Time) (paused bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.subjectLocked(subjectKey{env, subject})
	return a.failLocked(st, now)
}

func (a *admission) failLocked(st *subjectState, now time.Time) (paused bool) {
	st.leakLocked(now)
	if st.failures == 0 {
		st.leakFrom = now
	}
	st.failures++
	return st.failures == HarnessFailureBudget
}

// subjectLocked returns k's state, made on first use.
func (a *admission) subjectLocked(k subjectKey) *subjectState {
	st := a.subjects[k]
	if st == nil {
		st = &subjectState{}
		a.subjects[k] = st
	}
	return st
}
