package session

import (
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"
)

// DefaultTTL is how long a detached session is kept (spec/jsonrpc.md §2.4: 30 s).
const DefaultTTL = 30 * time.Second

// Sentinel errors of Resume.
var (
	ErrUnknownSession = errors.New("session: unknown session id")
	ErrAttached       = errors.New("session: already attached to another connection")
	ErrClosed         = errors.New("session: registry closed")
)

// State is what a session owns beyond its connections. Close releases it (kills the
// session's processes) and must be idempotent.
type State interface{ Close() }

// Owner identifies an attached connection; compared by identity.
type Owner any

// Session is one JSON-RPC session.
type Session[S State] struct {
	ID    string
	State S

	// guarded by Table.mu
	owner    Owner
	deadline time.Time
	timer    *time.Timer
	gen      uint64 // detach generation; a timer acts only on its own generation
}

// Table holds sessions. The zero value is not usable; call NewTable.
type Table[S State] struct {
	ttl time.Duration
	now func() time.Time

	// mu guards sessions, closed and every Session's owner/deadline/timer/gen. Held
	// only for map and field updates, never while calling State.Close.
	mu       sync.Mutex
	sessions map[string]*Session[S]
	closed   bool
	timers   sync.WaitGroup // expiry callbacks in flight
}

// NewTable returns a table whose detached sessions live for ttl (≤ 0: DefaultTTL).
func NewTable[S State](ttl time.Duration) *Table[S] {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Table[S]{ttl: ttl, now: time.Now, sessions: make(map[string]*Session[S])}
}

// Create makes a new session with a fresh UUIDv4 id, attached to owner.
func (r *Table[S]) Create(owner Owner, state S) (*Session[S], error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	s := &Session[S]{ID: newUUID(), State: state, owner: owner}
	r.sessions[s.ID] = s
	return s, nil
}

// Resume attaches owner to the session id (spec/jsonrpc.md §2.3).
func (r *Table[S]) Resume(id string, owner Owner) (*Session[S], error) {
	r.mu.Lock()
	s, ok := r.sessions[id]
	if !ok || r.closed {
		r.mu.Unlock()
		return nil, ErrUnknownSession
	}
	if s.owner != nil {
		r.mu.Unlock()
		return nil, ErrAttached
	}
	if !s.deadline.IsZero() && !r.now().Before(s.deadline) {
		r.removeLocked(s)
		r.mu.Unlock()
		s.State.Close()
		return nil, ErrUnknownSession
	}
	s.owner = owner
	s.deadline = time.Time{}
	s.gen++
	if s.timer != nil {
		if s.timer.Stop() {
			r.timers.Done() // the callback will never run
		}
		s.timer = nil
	}
	r.mu.Unlock()
	return s, nil
}

// AttachedTo reports whether s is currently attached to owner.
func (r *Table[S]) AttachedTo(s *Session[S], owner Owner) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return s.owner == owner && r.sessions[s.ID] == s
}

// Detach detaches s from owner (no-op if another owner holds it) and starts its TTL.
func (r *Table[S]) Detach(s *Session[S], owner Owner) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.owner != owner || r.sessions[s.ID] != s {
		return
	}
	s.owner = nil
	s.gen++
	gen := s.gen
	s.deadline = r.now().Add(r.ttl)
	if r.closed {
		return
	}
	r.timers.Add(1)
	s.timer = time.AfterFunc(r.ttl, func() { // expiry callback, owned by the table
		defer r.timers.Done()
		r.expire(s, gen)
	})
}

func (r *Table[S]) expire(s *Session[S], gen uint64) {
	r.mu.Lock()
	if s.gen != gen || s.owner != nil || r.sessions[s.ID] != s {
		r.mu.Unlock()
		return
	}
	r.removeLocked(s)
	r.mu.Unlock()
	s.State.Close()
}

func (r *Table[S]) removeLocked(s *Session[S]) {
	delete(r.sessions, s.ID)
	if s.timer != nil {
		if s.timer.Stop() {
			r.timers.Done() // the callback will never run
		}
		s.timer = nil
	}
}

// Len reports the number of live sessions.
func (r *Table[S]) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sessions)
}

// States returns the State of every live session (a snapshot; for metrics, which read the
// sessions' queues without holding the table's lock).
func (r *Table[S]) States() []S {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]S, 0, len(r.sessions))
	for _, s := range r.sessions {
		out = append(out, s.State)
	}
	return out
}

// Close removes every session, closes their State, and waits for expiry callbacks.
func (r *Table[S]) Close() {
	r.mu.Lock()
	r.closed = true
	var all []*Session[S]
	for _, s := range r.sessions {
		all = append(all, s)
		r.removeLocked(s)
	}
	r.mu.Unlock()
	for _, s := range all {
		s.State.Close()
	}
	r.timers.Wait()
}

// newUUID returns a random RFC 4122 version 4 UUID in canonical text form.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
