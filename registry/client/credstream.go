package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// CredentialStreamOptions configures a CredentialStream. Nil means defaults; never mutated.
type CredentialStreamOptions struct {
	// Now is the clock for expiry checks. Nil means time.Now.
	Now func() time.Time
	// InitialTimeout bounds WaitInitial. Zero means InitialCredentialTimeout; negative means
	// no bound.
	InitialTimeout time.Duration
}

// CredentialStream is the Auth of `--executor-credential-stdin`: a bearer that rotates with
// every frame read from stdin (frame format in credframe.go). It is safe for concurrent use:
// Apply runs on register and on every validate while ReadFrames swaps the token.
//
// Lifecycle: the caller runs ReadFrames (once) on a goroutine it owns, calls WaitInitial
// before the first registry call, and stops the executor when ReadFrames returns: a nil
// process-level outcome for ErrCredentialPipeClosed after start-up, exit 1 for any other
// error. A rejected frame poisons the stream: Apply and WaitInitial return its error from
// then on, and the token is never replaced again.
type CredentialStream struct {
	envID       string
	now         func() time.Time
	initTimeout time.Duration
	first       chan struct{} // closed by the first frame, EOF or error (whichever comes first)

	// mu guards the fields below: ReadFrames writes them, Apply (register, up to 32 validates
	// at once) and WaitInitial read them. Held for field copies only, never across I/O.
	mu        sync.Mutex
	token     string
	expiresAt uint64
	closed    bool  // stdin reached EOF
	err       error // terminal: a rejected frame or a read error
	started   bool  // first has been closed
	used      bool  // Apply has set a header at least once
}

// NewCredentialStream returns a stream for the (trimmed, validated) environment id envID. It
// starts nothing.
func NewCredentialStream(envID string, opts *CredentialStreamOptions) *CredentialStream {
	s := &CredentialStream{envID: envID, now: time.Now, initTimeout: InitialCredentialTimeout, first: make(chan struct{})}
	if opts != nil {
		if opts.Now != nil {
			s.now = opts.Now
		}
		if opts.InitialTimeout != 0 {
			s.initTimeout = opts.InitialTimeout
		}
	}
	return s
}

// ReadFrames reads frames from r until EOF or a failure, and returns why it stopped:
// ErrCredentialPipeClosed at a clean EOF, ErrInvalidCredentialFrame (also for a final line
// without "\n"), ErrCredentialFrameTooLarge, ErrCredentialWrongEnvironment,
// ErrCredentialExpired, or ErrCredentialRead. It never returns nil. It blocks in r.Read; to
// stop it early, make that Read fail (close or interrupt r). Call it at most once.
func (s *CredentialStream) ReadFrames(r io.Reader) error {
	br := bufio.NewReaderSize(r, MaxCredentialFrameLine)
	for {
		line, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return s.fail(ErrCredentialFrameTooLarge)
		case errors.Is(err, io.EOF) && len(line) > 0:
			return s.fail(ErrInvalidCredentialFrame)
		case errors.Is(err, io.EOF):
			return s.close()
		case err != nil:
			return s.fail(ErrCredentialRead)
		}
		f, err := DecodeCredentialFrame(bytes.TrimSuffix(line, []byte{'\n'}))
		if err == nil {
			err = f.Check(s.envID, s.now())
		}
		if err != nil {
			return s.fail(err)
		}
		s.set(f)
	}
}

func (s *CredentialStream) set(f CredentialFrame) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.token, s.expiresAt = f.token, f.ExpiresAt
	}
	s.startLocked()
}

func (s *CredentialStream) fail(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
	s.startLocked()
	return err
}

func (s *CredentialStream) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.startLocked()
	return ErrCredentialPipeClosed
}

func (s *CredentialStream) startLocked() {
	if !s.started {
		s.started = true
		close(s.first)
	}
}

// WaitInitial blocks until the first frame, EOF or error, and returns nil only when a valid
// credential is current and stdin is still open (as the reference: a frame followed at once
// by EOF fails start-up with ErrCredentialPipeClosed). It returns ErrCredentialInitialTimeout
// after the configured bound and ctx.Err() when ctx ends first.
func (s *CredentialStream) WaitInitial(ctx context.Context) error {
	var timeout <-chan time.Time
	if s.initTimeout > 0 {
		t := time.NewTimer(s.initTimeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-s.first:
	case <-timeout:
		return ErrCredentialInitialTimeout
	case <-ctx.Done():
		return ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.err != nil:
		return s.err
	case s.closed:
		return ErrCredentialPipeClosed
	}
	return nil
}

// Apply sets authorization: Bearer <current token>. It fails with the stream's terminal
// error, ErrCredentialPipeClosed after EOF, ErrCredentialUnavailable before the first frame,
// or ErrCredentialExpired once the current frame's expires_at has passed.
func (s *CredentialStream) Apply(_ context.Context, h http.Header) error {
	s.mu.Lock()
	tok, exp, closed, err := s.token, s.expiresAt, s.closed, s.err
	s.mu.Unlock()
	switch {
	case err != nil:
		return err
	case closed:
		return ErrCredentialPipeClosed
	case tok == "":
		return ErrCredentialUnavailable
	case (CredentialFrame{ExpiresAt: exp}).Expired(s.now()):
		return ErrCredentialExpired
	}
	s.mu.Lock()
	s.used = true
	s.mu.Unlock()
	h.Set("Authorization", "Bearer "+tok)
	return nil
}

// Used reports whether Apply has authorized a registry request. The caller uses it to
// tell EOF during start-up (before any request carried a credential: a failure, as in
// the reference) from EOF afterwards (a clean stop), whichever goroutine sees it first.
func (s *CredentialStream) Used() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

func (s *CredentialStream) String() string       { return "CredentialStream(<redacted>)" }
func (s *CredentialStream) LogValue() slog.Value { return slog.StringValue(s.String()) }
func (s *CredentialStream) GoString() string     { return s.String() }
