package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"

	"github.com/execlab/executor/registry/client"
)

func newStream(opts *client.CredentialStreamOptions) *client.CredentialStream {
	o := client.CredentialStreamOptions{Now: func() time.Time { return frameNow }}
	if opts != nil {
		o = *opts
	}
	return client.NewCredentialStream("env-1", &o)
}

// feeder writes frames into a running ReadFrames through an io.Pipe.
type feeder struct {
	t    *testing.T
	pw   *io.PipeWriter
	done chan error // ReadFrames' result
}

func startFeeder(t *testing.T, s *client.CredentialStream) *feeder {
	pr, pw := io.Pipe()
	f := &feeder{t: t, pw: pw, done: make(chan error, 1)}
	go func() { f.done <- s.ReadFrames(pr) }()
	t.Cleanup(func() { pw.Close(); <-f.done })
	return f
}

// send writes one line and returns once ReadFrames has processed it: an empty Write on an
// io.Pipe completes only when the reader calls Read again, which ReadFrames does only after
// handling the complete line before it.
func (f *feeder) send(line string) {
	f.t.Helper()
	if _, err := io.WriteString(f.pw, line+"\n"); err != nil {
		f.t.Fatalf("writing frame: %v", err)
	}
	if _, err := f.pw.Write(nil); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		f.t.Fatalf("syncing with the reader: %v", err)
	}
}

func authorization(t *testing.T, a client.Auth) (string, error) {
	t.Helper()
	h := http.Header{}
	err := a.Apply(context.Background(), h)
	return h.Get("Authorization"), err
}

// TestCredentialStream_RotationChangesRegisterAuthorization: a second frame replaces the
// bearer of the next registry call (observed from codex 0.169.0: the re-register after a
// 4xx upgrade carried the newer frame's token).
func TestCredentialStream_RotationChangesRegisterAuthorization(t *testing.T) {
	srv, reqs := server(t, okRegister)
	s := newStream(&client.CredentialStreamOptions{}) // real clock: frames expire in an hour
	c := newClient(t, srv.URL, &client.Options{Auth: s})
	f := startFeeder(t, s)
	exp := uint64(time.Now().Unix() + 3600)

	f.send(frameLine("tok-A", "env-1", exp))
	if err := s.WaitInitial(context.Background()); err != nil {
		t.Fatalf("WaitInitial: got %v, want nil", err)
	}
	if _, err := c.Register(context.Background(), json.RawMessage(key)); err != nil {
		t.Fatalf("first Register: %v", err)
	}
	f.send(frameLine("tok-B", "env-1", exp))
	if _, err := c.Register(context.Background(), json.RawMessage(key)); err != nil {
		t.Fatalf("second Register: %v", err)
	}
	// okRegister's body has no "valid", so Validate fails; only its authorization matters.
	_ = c.Validate(context.Background(), "reg-1", "stream-1", json.RawMessage(key), "")
	got := reqs()
	want := []string{"Bearer tok-A", "Bearer tok-B", "Bearer tok-B"}
	if len(got) != len(want) {
		t.Fatalf("got %d requests, want %d", len(got), len(want))
	}
	for i, r := range got {
		if a := r.header.Get("Authorization"); a != want[i] {
			t.Errorf("request %d (%s): got authorization %q, want %q", i, r.path, a, want[i])
		}
		if r.header.Get("Chatgpt-Account-Id") != "" {
			t.Errorf("request %d: got a chatgpt-account-id header, want none", i)
		}
	}
}

// TestCredentialStream_ReadFrames covers what ends the reader and what start-up and the
// next registry call see afterwards.
func TestCredentialStream_ReadFrames(t *testing.T) {
	valid := frameLine("tok-A", "env-1", uint64(frameNow.Unix()+60))
	pad := func(total int) string { // a valid frame line of exactly total bytes, "\n" included
		base := frameLine("", "env-1", uint64(frameNow.Unix()+60))
		return frameLine(strings.Repeat("a", total-len(base)-1), "env-1", uint64(frameNow.Unix()+60)) + "\n"
	}
	tests := []struct {
		name      string
		in        io.Reader
		want      error // from ReadFrames
		wantStart error // from WaitInitial afterwards
	}{
		{"empty stdin", strings.NewReader(""), client.ErrCredentialPipeClosed, client.ErrCredentialPipeClosed},
		{"frame then EOF", strings.NewReader(valid + "\n"), client.ErrCredentialPipeClosed, client.ErrCredentialPipeClosed},
		{"frame without newline", strings.NewReader(valid), client.ErrInvalidCredentialFrame, client.ErrInvalidCredentialFrame},
		{"empty object", strings.NewReader("{}\n"), client.ErrInvalidCredentialFrame, client.ErrInvalidCredentialFrame},
		{"blank line after a frame", strings.NewReader(valid + "\n\n"), client.ErrInvalidCredentialFrame, client.ErrInvalidCredentialFrame},
		{"CRLF frames", strings.NewReader(valid + "\r\n" + valid + "\r\n"), client.ErrCredentialPipeClosed, client.ErrCredentialPipeClosed},
		{"line at the limit", strings.NewReader(pad(client.MaxCredentialFrameLine)), client.ErrCredentialPipeClosed, client.ErrCredentialPipeClosed},
		{"line over the limit", strings.NewReader(pad(client.MaxCredentialFrameLine + 1)), client.ErrCredentialFrameTooLarge, client.ErrCredentialFrameTooLarge},
		{"long line without newline", strings.NewReader(strings.Repeat("a", 20000)), client.ErrCredentialFrameTooLarge, client.ErrCredentialFrameTooLarge},
		{"other environment", strings.NewReader(frameLine("t", "env-2", 1<<40) + "\n"), client.ErrCredentialWrongEnvironment, client.ErrCredentialWrongEnvironment},
		{"expired", strings.NewReader(frameLine("t", "env-1", uint64(frameNow.Unix())) + "\n"), client.ErrCredentialExpired, client.ErrCredentialExpired},
		{"expired after a valid frame", strings.NewReader(valid + "\n" + frameLine("t", "env-1", 0) + "\n"), client.ErrCredentialExpired, client.ErrCredentialExpired},
		{"read error", iotest.ErrReader(errors.New("EIO")), client.ErrCredentialRead, client.ErrCredentialRead},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStream(nil)
			if got := s.ReadFrames(tt.in); got != tt.want {
				t.Errorf("ReadFrames: got %v, want %v", got, tt.want)
			}
			if got := s.WaitInitial(context.Background()); got != tt.wantStart {
				t.Errorf("WaitInitial: got %v, want %v", got, tt.wantStart)
			}
			if _, got := authorization(t, s); got != tt.wantStart {
				t.Errorf("Apply: got %v, want %v", got, tt.wantStart)
			}
		})
	}
}

// TestCredentialStream_PoisonedByBadFrame: after a rejected frame the previous token is no
// longer used.
func TestCredentialStream_PoisonedByBadFrame(t *testing.T) {
	s := newStream(nil)
	f := startFeeder(t, s)
	f.send(frameLine("tok-A", "env-1", uint64(frameNow.Unix()+60)))
	if got, err := authorization(t, s); got != "Bearer tok-A" || err != nil {
		t.Fatalf("before the bad frame: got %q, %v; want Bearer tok-A", got, err)
	}
	io.WriteString(f.pw, "{}\n")
	if got := <-f.done; got != client.ErrInvalidCredentialFrame {
		t.Fatalf("ReadFrames: got %v, want ErrInvalidCredentialFrame", got)
	}
	f.done <- nil // for the cleanup
	if got, err := authorization(t, s); got != "" || err != client.ErrInvalidCredentialFrame {
		t.Errorf("after the bad frame: got %q, %v; want no header, ErrInvalidCredentialFrame", got, err)
	}
}

func TestCredentialStream_ApplyStates(t *testing.T) {
	now := frameNow
	s := client.NewCredentialStream("env-1", &client.CredentialStreamOptions{Now: func() time.Time { return now }})
	if _, err := authorization(t, s); err != client.ErrCredentialUnavailable {
		t.Errorf("before any frame: got %v, want ErrCredentialUnavailable", err)
	}
	f := startFeeder(t, s)
	f.send(frameLine("tok-A", "env-1", uint64(frameNow.Unix()+10)))
	if got, err := authorization(t, s); got != "Bearer tok-A" || err != nil {
		t.Errorf("valid: got %q, %v; want Bearer tok-A, nil", got, err)
	}
	now = frameNow.Add(10 * time.Second) // no frame arrives in time (clock read only by Apply here)
	if got, err := authorization(t, s); got != "" || err != client.ErrCredentialExpired {
		t.Errorf("expired: got %q, %v; want no header, ErrCredentialExpired", got, err)
	}
}

// TestCredentialStream_RegisterWithExpiredCredential: the registry is not called and the
// error is the reference's auth build failure.
func TestCredentialStream_RegisterWithExpiredCredential(t *testing.T) {
	srv, reqs := server(t, okRegister)
	now := frameNow
	var mu sync.Mutex
	s := client.NewCredentialStream("env-1", &client.CredentialStreamOptions{Now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}})
	c := newClient(t, srv.URL, &client.Options{Auth: s})
	f := startFeeder(t, s)
	f.send(frameLine("tok-A", "env-1", uint64(frameNow.Unix()+10)))
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	_, err := c.Register(context.Background(), json.RawMessage(key))
	const want = "environment registry authentication error: failed to resolve environment registry authentication: request auth build error: exec-server executor credential is expired"
	if err == nil || err.Error() != want || !errors.Is(err, client.ErrCredentialExpired) || !errors.Is(err, client.ErrAuthentication) {
		t.Errorf("got %v, want %q wrapping ErrCredentialExpired", err, want)
	}
	if n := len(reqs()); n != 0 {
		t.Errorf("got %d requests, want 0", n)
	}
}

func TestCredentialStream_WaitInitialTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStream(nil)
		start := time.Now()
		if err := s.WaitInitial(context.Background()); err != client.ErrCredentialInitialTimeout {
			t.Errorf("got %v, want ErrCredentialInitialTimeout", err)
		}
		if d := time.Since(start); d != client.InitialCredentialTimeout {
			t.Errorf("waited %v, want %v", d, client.InitialCredentialTimeout)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := s.WaitInitial(ctx); err != context.Canceled {
			t.Errorf("cancelled: got %v, want context.Canceled", err)
		}
	})
}

// TestCredentialStream_ConcurrentApply runs Apply from many goroutines while frames rotate
// (meaningful under -race).
func TestCredentialStream_ConcurrentApply(t *testing.T) {
	s := newStream(nil)
	f := startFeeder(t, s)
	exp := uint64(frameNow.Unix() + 60)
	f.send(frameLine("tok-0", "env-1", exp))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if got, err := authorization(t, s); err != nil || !strings.HasPrefix(got, "Bearer tok-") {
					t.Errorf("got %q, %v; want a rotated bearer", got, err)
					return
				}
			}
		})
	}
	for i := range 50 {
		f.send(frameLine("tok-"+string(rune('a'+i%26)), "env-1", exp))
	}
	close(stop)
	wg.Wait()
}

func TestCredentialStream_Redacted(t *testing.T) {
	s := newStream(nil)
	_ = s.ReadFrames(strings.NewReader(frameLine("tok-SECRET", "env-1", 1<<40) + "\n"))
	for _, v := range []string{s.String(), s.GoString(), s.LogValue().String()} {
		if strings.Contains(v, "SECRET") {
			t.Errorf("got %q, want the token redacted", v)
		}
	}
}
