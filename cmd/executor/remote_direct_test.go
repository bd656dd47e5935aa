package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
	"github.com/execlab/executor/internal/wsmsg"
	"github.com/execlab/executor/registry/direct/directtest"
)

// TestRemoteDirect_FlagRules: the reference's rules for the direct-transport flags (PROBED
// on 0.171.0): usage errors (exit 2) and the two runtime errors (exit 1).
func TestRemoteDirect_FlagRules(t *testing.T) {
	t.Setenv("CODEX_HOME", t.TempDir())
	base := []string{"--registry", "http://127.0.0.1:1", "--environment-id", "e"}
	for _, tc := range []struct {
		args  []string
		usage bool
		text  string
	}{
		{[]string{"--remote-transport", "bogus"}, true, "invalid value \"bogus\" for '--remote-transport'"},
		{[]string{"--remote-transport", "direct"}, true, "--remote-transport direct requires --aws-sigv4"},
		{[]string{"--remote-transport", "direct", "--aws-region", "us-west-2"}, true, "--aws-region requires --aws-sigv4"},
		{[]string{"--aws-profile", "p"}, true, "--aws-profile requires --aws-sigv4"},
		{[]string{"--remote-transport", "direct", "--aws-sigv4", "--registration-bearer-stdin"}, true, "'--aws-sigv4' cannot be used with '--registration-bearer-stdin'"},
		{[]string{"--remote-transport", "direct", "--aws-sigv4", "--use-agent-identity-auth"}, true, "'--aws-sigv4' cannot be used with '--use-agent-identity-auth'"},
		{[]string{"--aws-sigv4"}, false, "--aws-sigv4 requires --remote-transport direct"},
		{[]string{"--remote-transport", "direct", "--aws-sigv4", "--aws-service", ""}, false, "AWS service name must not be empty"},
	} {
		err := runRemote(context.Background(), append(append([]string(nil), base...), tc.args...), strings.NewReader(""), io.Discard, io.Discard)
		if err == nil || errors.Is(err, errUsage) != tc.usage || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%v: err = %v (usage %v), want %q (usage %v)", tc.args, err, errors.Is(err, errUsage), tc.text, tc.usage)
		}
	}
}

// TestRemoteDirect_ServesOverSignedSocket: `executor remote --remote-transport direct
// --aws-sigv4` against a local endpoint that verifies SigV4 independently (directtest):
// registration and upgrade verify, and a harness on the endpoint's side of the socket runs
// initialize + process/start and receives the output.
func TestRemoteDirect_ServesOverSignedSocket(t *testing.T) {
	serveOverSignedSocket(t, "ap-northeast-1", "custom-svc", func(ctx context.Context, url string) error {
		return runRemote(ctx, []string{"--registry", url, "--environment-id", "env-cli", "--log-level", "error",
			"--remote-transport", "direct", "--aws-sigv4", "--aws-region", "ap-northeast-1", "--aws-service", "custom-svc"},
			strings.NewReader(""), io.Discard, io.Discard)
	})
}

// serveOverSignedSocket runs the executor command run starts (given the endpoint's URL)
// against a local endpoint that verifies SigV4 for region and service with its own
// implementation (directtest), drives initialize + process/start from the endpoint's side
// of the socket, then cancels run and checks what the endpoint saw: a 200 registration and
// a 101 upgrade signed for that region and service.
func serveOverSignedSocket(t *testing.T, region, service string, run func(ctx context.Context, url string) error) {
	t.Helper()
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE": filepath.Join(dir, "c"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "k"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_PROFILE": "", "AWS_SESSION_TOKEN": "", "AWS_DEFAULT_REGION": "",
		"AWS_ACCESS_KEY_ID": "AKIDCLI", "AWS_SECRET_ACCESS_KEY": "cli-secret", "AWS_REGION": "",
		"CODEX_HOME": dir, "HOME": dir,
	} {
		t.Setenv(k, v)
	}
	v := &directtest.Verifier{Keys: map[string]directtest.Key{"AKIDCLI": {Secret: "cli-secret"}}, Region: region, Service: service}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	result := make(chan error, 1)
	ep := directtest.NewEndpoint(t, v, func(_ context.Context, c *websocket.Conn) {
		select {
		case result <- driveDirectHarness(ctx, t, c):
		default:
		}
	})
	done := make(chan error, 1)
	go func() { done <- run(ctx, ep.URL) }()
	select {
	case err := <-result:
		if err != nil {
			t.Fatalf("harness over the direct socket: %v", err)
		}
	case err := <-done:
		t.Fatalf("the executor ended first: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("the executor after cancel = %v", err)
	}
	r := ep.Requests()
	if len(r) < 2 || r[0].Status != 200 || r[1].Status != 101 ||
		!strings.Contains(r[1].Header["authorization"], "/"+region+"/"+service+"/aws4_request, SignedHeaders=host;x-amz-date,") {
		t.Fatalf("endpoint saw %+v", r)
	}
}

// TestExecServer_DirectTransportServes: `executor exec-server --remote URL
// --remote-transport direct --aws-sigv4` (the codex exec-server command line) runs the same
// direct transport as `remote`: the verifying endpoint accepts the signed registration and
// upgrade, and a harness on its side runs a process. An explicitly empty --aws-service is
// refused first, as by the reference.
func TestExecServer_DirectTransportServes(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CODEX_HOME", os.Getenv("HOME"))
	var stderr strings.Builder
	if code := run([]string{"exec-server", "--remote", "http://127.0.0.1:1", "--environment-id", "e",
		"--remote-transport", "direct", "--aws-sigv4", "--aws-service", ""}, strings.NewReader(""), io.Discard, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "AWS service name must not be empty") {
		t.Fatalf("empty --aws-service: exit %d, stderr %q; want 1 and the reference's text", code, stderr.String())
	}
	serveOverSignedSocket(t, "eu-west-3", "execute-api", func(ctx context.Context, url string) error {
		return runExecServer(ctx, []string{"--remote", url, "--environment-id", "env-xs",
			"--remote-transport", "direct", "--aws-sigv4", "--aws-region", "eu-west-3"},
			strings.NewReader(""), io.Discard, io.Discard)
	})
}

func driveDirectHarness(ctx context.Context, t *testing.T, c *websocket.Conn) error {
	notes := make(chan harness.Notification, 64)
	cl := harness.Open(wsmsg.New(c), &harness.Options{OnNotification: func(n harness.Notification) {
		select {
		case notes <- n:
		default:
		}
	}})
	defer cl.Close()
	if _, err := cl.Initialize(ctx, "direct-cli", ""); err != nil {
		return err
	}
	if _, err := cl.StartProcess(ctx, protocol.ProcessStartParams{ProcessID: "p", Argv: []string{"sh", "-c", "echo direct-ok"},
		Cwd: protocol.FromNative(t.TempDir()), Env: map[string]string{"PATH": "/usr/bin:/bin"}}); err != nil {
		return err
	}
	var got []byte
	for !strings.Contains(string(got), "direct-ok\n") {
		select {
		case n := <-notes:
			if n.Method == protocol.MethodProcessOutput {
				if out, err := n.ProcessOutput(); err == nil {
					got = append(got, out.Chunk...)
				}
			}
		case <-ctx.Done():
			return errors.New("no output from the process before the deadline")
		}
	}
	return nil
}
