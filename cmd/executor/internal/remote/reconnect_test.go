package remote_test

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/cmd/executor/internal/remote"
	"github.com/execlab/executor/internal/syncbuf"
	"github.com/execlab/executor/noise"
	"github.com/execlab/executor/noise/channel"
	"github.com/execlab/executor/relay/wsconn"
)

// TestRemote_Upgrade4xxReregisters5xxDoesNot: a 5xx upgrade redials the same url; a 4xx
// re-registers first (same executor key) and dials the new url; every attempt has a fresh
// x-request-id.
func TestRemote_Upgrade4xxReregisters5xxDoesNot(t *testing.T) {
	fx := newFixture(t)
	fx.upgradeStatus = []int{500, 502, 401, 0}
	runExecutor(t, fx, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fx.nextSocket(ctx)

	ups := fx.upgradeRequests()
	if len(ups) != 4 {
		t.Fatalf("upgrade attempts: got %d, want 4", len(ups))
	}
	wantPaths := []string{"/rendezvous/1", "/rendezvous/1", "/rendezvous/1", "/rendezvous/2"}
	seen := map[string]bool{}
	for i, u := range ups {
		if u.URL.Path != wantPaths[i] {
			t.Errorf("attempt %d dialed %s, want %s", i+1, u.URL.Path, wantPaths[i])
		}
		id := u.Header.Get("X-Request-Id")
		if !regexp.MustCompile(`^req_[0-9a-f]{32}$`).MatchString(id) || seen[id] {
			t.Errorf("attempt %d x-request-id %q: want a fresh req_<32 hex>", i+1, id)
		}
		seen[id] = true
	}
	regs := fx.registerCalls()
	if len(regs) != 2 {
		t.Fatalf("register calls: got %d, want 2 (one re-register after the 401)", len(regs))
	}
	if !bytes.Equal(regs[0].body, regs[1].body) {
		t.Errorf("re-register posted a different body; want the same identity")
	}
}

// TestRemote_ReregisteredDialsAtOnce: after a successful re-registration the back-off is
// reset and the rendezvous dialled within the jitter, however long the back-off had grown
// (here an hour: without the reset the test would time out).
func TestRemote_ReregisteredDialsAtOnce(t *testing.T) {
	fx := newFixture(t)
	fx.upgradeStatus = []int{401, 0}
	runExecutor(t, fx, nil, func(c *remote.Config) {
		c.Backoff = &wsconn.Backoff{Initial: time.Hour, Max: time.Hour}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fx.nextSocket(ctx)
	if n := len(fx.registerCalls()); n != 2 {
		t.Fatalf("register calls: got %d, want 2", n)
	}
}

// TestRemote_PongTimeoutReconnects: a rendezvous that never answers Pings is dropped after the
// pong deadline and the executor redials the same url without re-registering.
func TestRemote_PongTimeoutReconnects(t *testing.T) {
	fx := newFixture(t)
	fx.silent = true
	logs := &syncbuf.Buffer{}
	runExecutor(t, fx, logs, func(c *remote.Config) {
		c.Conn = &wsconn.Options{PingInterval: 20 * time.Millisecond, PongTimeout: 60 * time.Millisecond}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fx.nextSocket(ctx)
	fx.mu.Lock()
	fx.silent = false
	fx.mu.Unlock()
	fx.nextSocket(ctx)
	if n := len(fx.registerCalls()); n != 1 {
		t.Errorf("register calls: got %d, want 1", n)
	}
	if !strings.Contains(logs.String(), "noise_reason=pong_timeout") {
		t.Errorf("logs lack noise_reason=pong_timeout")
	}
}

// TestRemote_ValidateOutcomes: every non-valid answer resets the stream; a 401 first sends the
// authenticated rejection message 2.
func TestRemote_ValidateOutcomes(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   error
	}{
		{"valid false", 200, `{"valid":false}`, errReset},
		{"valid missing", 200, `{}`, errReset},
		{"garbage", 200, `not json`, errReset},
		{"403", 403, `{"error":{"code":"forbidden"}}`, errReset},
		{"500", 500, `oops`, errReset},
		{"401", 401, `{}`, channel.ErrExecutorCredentialsRejected},
	}
	fx := newFixture(t)
	runExecutor(t, fx, nil, func(c *remote.Config) {})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sock := fx.nextSocket(ctx)
	harnessID, _ := noise.GenerateIdentity(nil)
	for i, tt := range tests {
		fx.mu.Lock()
		fx.validateStatus, fx.validateBody = tt.status, tt.body
		fx.mu.Unlock()
		id := "v-" + strings.ReplaceAll(tt.name, " ", "-")
		_, err := fx.handshake(ctx, t, sock, id, harnessID)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: handshake error %v, want %v", tt.name, err, tt.want)
		}
		if got := len(fx.validateCalls()); got != i+1 {
			t.Errorf("%s: validate calls %d, want %d", tt.name, got, i+1)
		}
	}
}

// TestRemote_OversizedAuthorizationNotValidated: a 4097-byte authorization is reset without a
// registry call; 4096 bytes and empty are validated.
func TestRemote_OversizedAuthorizationNotValidated(t *testing.T) {
	fx := newFixture(t)
	runExecutor(t, fx, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sock := fx.nextSocket(ctx)
	harnessID, _ := noise.GenerateIdentity(nil)
	for _, tt := range []struct {
		n         int
		validated bool
	}{{4097, false}, {4096, true}, {0, true}} {
		before := len(fx.validateCalls())
		id := "authz-" + string(rune('a'+tt.n%26))
		hs := sock.stream(id)
		_, err := channel.Initiator(ctx, hs, &channel.InitiatorConfig{
			Static: harnessID, ResponderStatic: fx.executorKey(t),
			Prologue:      noise.AppendPrologue(nil, testEnvID, testRegID, id),
			Authorization: bytes.Repeat([]byte("a"), tt.n),
		})
		validated := len(fx.validateCalls()) > before
		if validated != tt.validated || (err == nil) != tt.validated {
			t.Errorf("authorization of %d bytes: validated %v (err %v), want %v", tt.n, validated, err, tt.validated)
		}
	}
}

// TestRemote_PendingValidationDoesNotBlock: while one handshake waits on a validate the
// registry holds, an established stream keeps answering. The hold is released only after
// the answer, so a stream blocked behind the validation would fail the test at the 30 s
// deadline instead of passing late; no clock is read.
func TestRemote_PendingValidationDoesNotBlock(t *testing.T) {
	fx := newFixture(t)
	runExecutor(t, fx, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sock := fx.nextSocket(ctx)
	harnessID, _ := noise.GenerateIdentity(nil)
	cl := fx.initialize(ctx, t, sock, "fast", harnessID)
	defer cl.Close()
	hold, held := make(chan struct{}), make(chan struct{})
	fx.mu.Lock()
	fx.validateHold, fx.validateHeld = hold, held
	fx.mu.Unlock()
	slowDone := make(chan error, 1)
	go func() {
		c, err := fx.handshake(ctx, t, sock, "slow", harnessID)
		if c != nil {
			c.Close()
		}
		slowDone <- err
	}()
	select {
	case <-held: // the slow handshake's validate is now pending at the registry
	case <-ctx.Done():
		t.Fatalf("waiting for the slow handshake's validate: %v", ctx.Err())
	}
	_, infoErr := cl.EnvironmentInfo(ctx)
	close(hold)
	if infoErr != nil {
		t.Fatalf("environment/info during a pending validation: %v", infoErr)
	}
	if err := <-slowDone; err != nil {
		t.Errorf("slow handshake: %v", err)
	}
}
