package remote_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/cmd/executor/internal/remote"
	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
	"github.com/execlab/executor/internal/wsmsg"
	"github.com/execlab/executor/registry/direct"
	"github.com/execlab/executor/registry/direct/directtest"
	"github.com/execlab/executor/relay/wsconn"
)

const (
	directKey    = "AKIDDIRECTTEST"
	directSecret = "direct-test-secret/K7MDENG"
	directRegion = "us-east-2"
)

// directEnv gives the AWS SDK only environment credentials (no files, no IMDS).
func directEnv(t *testing.T, secret string) {
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE": filepath.Join(dir, "c"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "k"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_PROFILE": "", "AWS_SESSION_TOKEN": "", "AWS_DEFAULT_REGION": "",
		"AWS_ACCESS_KEY_ID": directKey, "AWS_SECRET_ACCESS_KEY": secret, "AWS_REGION": directRegion,
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "", "AWS_WEB_IDENTITY_TOKEN_FILE": "",
	} {
		t.Setenv(k, v)
	}
}

func directVerifier() *directtest.Verifier {
	return &directtest.Verifier{Keys: map[string]directtest.Key{directKey: {Secret: directSecret}},
		Region: directRegion, Service: direct.DefaultService}
}

// driveHarness is the harness behind the signed WebSocket: initialize, then process/start
// of an echo whose output must arrive.
func driveHarness(ctx context.Context, t *testing.T, c *websocket.Conn) error {
	out := newOutputLog()
	cl := harness.Open(wsmsg.New(c), &harness.Options{OnNotification: out.onNotification})
	defer cl.Close()
	if _, err := cl.Initialize(ctx, "direct-e2e", ""); err != nil {
		return err
	}
	if _, err := cl.StartProcess(ctx, protocol.ProcessStartParams{ProcessID: "echo", Argv: []string{"sh", "-c", "echo hello-direct"},
		Cwd: protocol.FromNative(t.TempDir()), Env: map[string]string{"PATH": "/usr/bin:/bin"}}); err != nil {
		return err
	}
	return out.waitFor(ctx, "echo", "hello-direct\n")
}

// TestRunCommand_DirectSigV4ServesJSONRPC: `executor remote --remote-transport direct
// --aws-sigv4` registers with a local endpoint that verifies SigV4 independently, opens the
// signed WebSocket, and serves a harness's initialize + process/start on it.
func TestRunCommand_DirectSigV4ServesJSONRPC(t *testing.T) {
	directEnv(t, directSecret)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	result := make(chan error, 1)
	ep := directtest.NewEndpoint(t, directVerifier(), func(hctx context.Context, c *websocket.Conn) {
		select {
		case result <- driveHarness(ctx, t, c):
		default: // a redial after the test's harness finished
		}
	})
	done := make(chan error, 1)
	go func() {
		done <- remote.RunCommand(ctx, &remote.Command{RegistryURL: ep.URL, EnvironmentID: "env-direct",
			Transport: remote.TransportDirect, AWS: remote.AWSConfig{SigV4: true}}, strings.NewReader(""))
	}()
	select {
	case err := <-result:
		if err != nil {
			t.Fatalf("harness over the direct socket: %v", err)
		}
	case err := <-done:
		t.Fatalf("RunCommand ended before the harness was served: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("RunCommand after cancel = %v, want nil", err)
	}
	reqs := ep.Requests()
	if len(reqs) < 2 || reqs[0].Path != "/cloud/environment/env-direct/direct/register" || reqs[0].Status != 200 ||
		reqs[1].Path != "/ws/env-direct" || reqs[1].Status != 101 {
		t.Fatalf("endpoint saw %+v", reqs)
	}
	if reqs[1].Header["x-request-id"] == "" {
		t.Errorf("upgrade has no x-request-id")
	}
}

// TestRunCommand_DirectRefusedSignature: a wrong secret, and a clock 16 minutes off, are
// refused with 403 by the verifying endpoint, and RunCommand fails with that status.
func TestRunCommand_DirectRefusedSignature(t *testing.T) {
	for _, tc := range []struct {
		name   string
		secret string
		now    func() time.Time
	}{
		{"wrong secret", "wrong-secret", nil},
		{"clock behind", directSecret, func() time.Time { return time.Now().Add(-16 * time.Minute) }},
		{"clock ahead", directSecret, func() time.Time { return time.Now().Add(16 * time.Minute) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			directEnv(t, tc.secret)
			ep := directtest.NewEndpoint(t, directVerifier(), nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := remote.RunCommand(ctx, &remote.Command{RegistryURL: ep.URL, EnvironmentID: "env-direct",
				Transport: remote.TransportDirect, AWS: remote.AWSConfig{SigV4: true, Now: tc.now}}, strings.NewReader(""))
			var de *direct.Error
			if !errors.As(err, &de) || de.Status != 403 || de.Kind != direct.ErrAuth {
				t.Fatalf("RunCommand = %v, want a 403 authentication error", err)
			}
			if r := ep.Requests(); len(r) != 1 || r[0].Status != 403 {
				t.Fatalf("endpoint saw %+v, want one refused registration", r)
			}
		})
	}
}

// TestRunCommand_DirectUpgradeRefusedEnds: a registration that verifies but an upgrade
// that does not (the signing clock moves past the skew in between) ends RunCommand with the
// 403 and no redial, as the reference exits on an HTTP error at the upgrade (PROBED).
func TestRunCommand_DirectUpgradeRefusedEnds(t *testing.T) {
	directEnv(t, directSecret)
	ep := directtest.NewEndpoint(t, directVerifier(), nil)
	signs := 0
	now := func() time.Time { // called once per signature, on RunCommand's goroutine
		signs++
		if signs > 1 {
			return time.Now().Add(-20 * time.Minute)
		}
		return time.Now()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := remote.RunCommand(ctx, &remote.Command{RegistryURL: ep.URL, EnvironmentID: "env-direct",
		Transport: remote.TransportDirect, AWS: remote.AWSConfig{SigV4: true, Now: now}}, strings.NewReader(""))
	var de *direct.Error
	if !errors.As(err, &de) || de.Status != 403 {
		t.Fatalf("RunCommand = %v, want the upgrade's 403", err)
	}
	r := ep.Requests()
	if len(r) != 2 || r[0].Status != 200 || r[1].Status != 403 || r[1].Method != "GET" {
		t.Fatalf("endpoint saw %+v, want a registration then one refused upgrade", r)
	}
}

// TestRunDirect_RedialsWithoutRegistering: a dropped socket is redialled with a fresh
// signature and no second registration (PROBED on 0.171.0), and the session started on the
// first socket is resumed on the second.
func TestRunDirect_RedialsWithoutRegistering(t *testing.T) {
	directEnv(t, directSecret)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sessions := make(chan string, 4)
	resumed := make(chan error, 1)
	var conns atomic.Int32
	ep := directtest.NewEndpoint(t, directVerifier(), func(_ context.Context, c *websocket.Conn) {
		n := conns.Add(1)
		cl := harness.Open(wsmsg.New(c), nil)
		defer cl.Close()
		switch n {
		case 1:
			init, err := cl.Initialize(ctx, "direct-redial", "")
			if err == nil {
				sessions <- init.SessionID
			}
		case 2:
			first := <-sessions
			init, err := cl.Initialize(ctx, "direct-redial", first)
			if err == nil && init.SessionID != first {
				err = fmt.Errorf("resumed session %q, want %q", init.SessionID, first)
			}
			resumed <- err
		}
	})
	s, err := direct.LoadSigner(ctx, direct.SignerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := executor.NewServer(&executor.Options{SessionTTL: time.Minute})
	defer srv.Close()
	done := make(chan error, 1)
	go func() {
		done <- remote.RunDirect(ctx, remote.DirectConfig{BaseURL: ep.URL, EnvironmentID: "env-redial", Signer: s,
			Server: srv, Backoff: &wsconn.Backoff{Initial: 10 * time.Millisecond, Max: 20 * time.Millisecond}})
	}()
	select {
	case err := <-resumed:
		if err != nil {
			t.Fatalf("resume on the second socket: %v", err)
		}
	case err := <-done:
		t.Fatalf("RunDirect ended: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("RunDirect after cancel = %v", err)
	}
	var regs, upgrades int
	for _, r := range ep.Requests() {
		switch r.Method {
		case "POST":
			regs++
		case "GET":
			upgrades++
		}
	}
	if regs != 1 || upgrades < 2 {
		t.Fatalf("registrations, upgrades = %d, %d; want 1, >= 2", regs, upgrades)
	}
}

func TestRunCommand_DirectNeedsSigV4(t *testing.T) {
	err := remote.RunCommand(context.Background(), &remote.Command{RegistryURL: "http://127.0.0.1:1", EnvironmentID: "e",
		Transport: remote.TransportDirect}, strings.NewReader(""))
	if !errors.Is(err, remote.ErrDirectNeedsSigV4) {
		t.Fatalf("RunCommand without SigV4 = %v, want ErrDirectNeedsSigV4", err)
	}
}
