// Package e2e_test runs the executor binary end to end on loopback.
package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
)

func TestMain(m *testing.M) { refbin.Main(m) }

// remoteExecutorBin builds ./cmd/executor once per test binary.
func remoteExecutorBin(t *testing.T) string {
	t.Helper()
	return refbin.Executor(t)
}

// TestRemoteCLI_ConfigurationErrors checks the exit statuses and messages of `executor remote`
// before any network call (spec/registry-auth.md §6, §11).
func TestRemoteCLI_ConfigurationErrors(t *testing.T) {
	bin := remoteExecutorBin(t)
	home := t.TempDir()
	tests := []struct {
		name   string
		args   []string
		env    []string
		stdin  string
		status int
		want   string
	}{
		{"no auth", []string{"--registry", "http://127.0.0.1:1", "--environment-id", "env-1"}, nil, "", 1,
			"Error: remote exec-server registration requires ChatGPT authentication or API key authentication; run `codex login` or set CODEX_API_KEY"},
		{"api key host", []string{"--registry", "https://service.openai.org.evil.example", "--environment-id", "env-1"},
			[]string{"CODEX_API_KEY=sk-SECRET"}, "", 1,
			"Error: remote exec-server API-key authentication is restricted to HTTPS openai.com and openai.org hosts and subdomains or loopback hosts"},
		{"bad env id", []string{"--registry", "http://127.0.0.1:1", "--environment-id", "bad/../id", "--registration-bearer-stdin"},
			nil, "tok\n", 1, "environment id must contain only ASCII letters, numbers, '-' or '_'"},
		{"empty bearer", []string{"--registry", "http://127.0.0.1:1", "--environment-id", "env-1", "--registration-bearer-stdin"},
			nil, "\n", 1, "Error: invalid registration bearer"},
		{"stdin modes exclusive", []string{"--registry", "http://127.0.0.1:1", "--environment-id", "env-1",
			"--registration-bearer-stdin", "--chatgpt-token-stdin"}, nil, "", 2, "cannot be used together"},
		{"missing environment id", []string{"--registry", "http://127.0.0.1:1"}, nil, "", 2, "--environment-id is required"},
		{"chatgpt token needs https", []string{"--registry", "http://127.0.0.1:1", "--environment-id", "env-1", "--chatgpt-token-stdin"},
			nil, "tok\n", 1, "ChatGPT token registry URLs must use HTTPS without userinfo or fragments"},
		{"access token without flag", []string{"--registry", "http://127.0.0.1:1", "--environment-id", "env-1"},
			[]string{"CODEX_ACCESS_TOKEN=x"}, "", 1, "Agent Identity auth requires --use-agent-identity-auth"},
		{"connection refused", []string{"--registry", "http://127.0.0.1:1/", "--environment-id", "env-1"},
			[]string{"CODEX_API_KEY=sk-SECRET"}, "", 1,
			"Error: environment registry request failed: error sending request for url (http://127.0.0.1:1/cloud/environment/env-1/register)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, append([]string{"remote"}, tt.args...)...)
			cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + home, "CODEX_HOME=" + home}, tt.env...)
			cmd.Stdin = strings.NewReader(tt.stdin)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			status := 0
			if errors.As(err, &ee) {
				status = ee.ExitCode()
			}
			if status != tt.status || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("got exit %d, stderr %q; want exit %d containing %q", status, stderr.String(), tt.status, tt.want)
			}
			if strings.Contains(stderr.String(), "SECRET") {
				t.Errorf("stderr leaks a credential: %q", stderr.String())
			}
		})
	}
}
