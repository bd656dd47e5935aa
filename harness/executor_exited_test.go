package harness

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/execlab/executor/noise"
)

// TestFetchBundle_ExecutorExited: connect's 409 environment_offline with our registry's
// executor_exited becomes a ConnectError that is ErrExecutorExited (and still retryable,
// so a first connection keeps waiting for a new executor); without the member (a released
// registry), or on another code, it is not.
func TestFetchBundle_ExecutorExited(t *testing.T) {
	id, err := noise.GenerateIdentity(nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		status int
		body   string
		exited bool
	}{
		{409, `{"error":{"code":"environment_offline","message":"m","executor_exited":true}}`, true},
		{409, `{"error":{"code":"environment_offline","message":"m"}}`, false},
		{409, `{"error":{"code":"registration_fenced","message":"m","executor_exited":true}}`, false},
		{503, `{"error":{"code":"environment_offline","message":"m","executor_exited":true}}`, false},
		{409, `{"error":{"code":"environment_offline","message":"m","executor_exited":"yes"}}`, false},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(tt.status)
			_, _ = io.WriteString(w, tt.body)
		}))
		_, err := fetchBundle(context.Background(), &RemoteOptions{Registry: srv.URL, Token: "t"}, "env-1", id.Public(), "")
		srv.Close()
		var ce *ConnectError
		if !errors.As(err, &ce) {
			t.Fatalf("%d %s: got %v, want a ConnectError", tt.status, tt.body, err)
		}
		if got := errors.Is(err, ErrExecutorExited); got != tt.exited {
			t.Errorf("%d %s: errors.Is(ErrExecutorExited) = %v, want %v", tt.status, tt.body, got, tt.exited)
		}
		if tt.exited && !ce.Retryable {
			t.Errorf("%d %s: not retryable, want retryable (a first connection keeps waiting)", tt.status, tt.body)
		}
	}
}

// nopConn is a MessageConn that is already broken.
type nopConn struct{}

func (nopConn) ReadMessage(context.Context) ([]byte, error) { return nil, io.EOF }
func (nopConn) WriteMessage(context.Context, []byte) error  { return io.EOF }
func (nopConn) Close() error                                { return nil }

// TestRecover_ExecutorExitedEndsAtOnce: a recovery whose connect is refused with
// executor_exited stops after that attempt, long before its 10-minute window, with an
// error that is ErrExecutorExited; a plain environment_offline keeps it trying.
func TestRecover_ExecutorExitedEndsAtOnce(t *testing.T) {
	attempts := 0
	offline := &ConnectError{Status: 409, Code: "environment_offline", Retryable: true}
	s := &sessionConn{
		dial: func(context.Context) (MessageConn, error) {
			attempts++
			if attempts < 3 {
				return nil, offline // the notice has not landed yet
			}
			return nil, &ConnectError{Status: 409, Code: "environment_offline", Retryable: true, ExecutorExited: true}
		},
		timeout: 10 * time.Minute, log: slog.New(slog.DiscardHandler),
		wsem: make(chan struct{}, 1), cur: nopConn{},
		inflight: map[string]*inflightReq{}, procs: map[string]*procState{},
	}
	start := time.Now()
	err := s.recover(context.Background(), io.EOF)
	if !errors.Is(err, ErrExecutorExited) {
		t.Fatalf("recover: got %v, want ErrExecutorExited", err)
	}
	if attempts != 3 {
		t.Errorf("attempts: got %d, want 3 (two plain offline, then the exit)", attempts)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("recover took %v, want it to end at the exit notice (two back-offs, under 3 s)", el)
	}
}
