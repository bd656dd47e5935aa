package remote

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execlab/executor/registry/client"
)

// TestRemoteAuth_SourceOrder: the credential source is chosen in the reference's order
// (spec/registry-auth.md §11.1); each case gives the authorization header the chosen source
// applies, or the error that refuses it.
func TestRemoteAuth_SourceOrder(t *testing.T) {
	home := t.TempDir() // no .codex/auth.json under it
	garbage := t.TempDir()
	if err := os.WriteFile(filepath.Join(garbage, "auth.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		in       AuthConfig
		registry string
		stdin    string
		env      map[string]string
		want     string // authorization header, when no error
		wantErr  error  // matched with errors.Is
		errText  string // or a substring of the error, when there is no sentinel
	}{
		{name: "bearer line", in: AuthConfig{BearerStdin: true}, stdin: "tok-1\nrest", want: "Bearer tok-1"},
		{name: "bearer wins over api key", in: AuthConfig{BearerStdin: true}, stdin: "tok-2\n",
			env: map[string]string{"CODEX_API_KEY": "sk-x"}, want: "Bearer tok-2"},
		{name: "bearer empty line", in: AuthConfig{BearerStdin: true}, stdin: "\n", wantErr: client.ErrInvalidBearer},
		{name: "bearer at EOF", in: AuthConfig{BearerStdin: true}, stdin: "", wantErr: client.ErrInvalidBearer},
		{name: "chatgpt over plain http", in: AuthConfig{ChatGPTStdin: true}, registry: "http://registry.example",
			stdin: "tok\n", wantErr: client.ErrChatGPTTokenURL},
		{name: "agent identity without token", in: AuthConfig{AgentIdentity: true},
			errText: "CODEX_ACCESS_TOKEN is required when --use-agent-identity-auth is set"},
		{name: "access token without the flag", env: map[string]string{"CODEX_ACCESS_TOKEN": "jwt", "CODEX_API_KEY": "sk-x"},
			errText: "CODEX_ACCESS_TOKEN is set but Agent Identity auth requires --use-agent-identity-auth"},
		{name: "api key on loopback", env: map[string]string{"CODEX_API_KEY": " sk-test "}, want: "Bearer sk-test"},
		{name: "api key on another host", registry: "https://registry.example",
			env: map[string]string{"CODEX_API_KEY": "sk-test"}, wantErr: client.ErrAPIKeyHost},
		{name: "nothing usable", wantErr: ErrNoAuth},
		{name: "unreadable auth.json", in: AuthConfig{CodexHome: garbage}, wantErr: ErrNoAuth},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"HOME": home}
			for k, v := range tt.env {
				env[k] = v
			}
			registry := tt.registry
			if registry == "" {
				registry = "http://127.0.0.1:9"
			}
			auth, err := remoteAuth(tt.in, registry, bufio.NewReader(strings.NewReader(tt.stdin)),
				environ{func(k string) string { return env[k] }})
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("got %v, want %v", err, tt.wantErr)
				}
				return
			case tt.errText != "":
				if err == nil || err.Error() != tt.errText {
					t.Fatalf("got %v, want %q", err, tt.errText)
				}
				return
			case err != nil:
				t.Fatalf("got %v, want a source", err)
			}
			h := http.Header{}
			if err := auth.Apply(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			if got := h.Get("Authorization"); got != tt.want {
				t.Errorf("authorization: got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestReadLine_LeavesTheRest: the bearer line is consumed and what follows stays buffered for
// the stdin pump (--exit-on-stdin-close).
func TestReadLine_LeavesTheRest(t *testing.T) {
	r := bufio.NewReader(strings.NewReader("tok\nmore"))
	line, err := readLine(r)
	if err != nil || line != "tok\n" {
		t.Fatalf("readLine: got %q, %v; want \"tok\\n\"", line, err)
	}
	rest, _ := r.ReadString(0)
	if rest != "more" {
		t.Errorf("rest: got %q, want \"more\"", rest)
	}
}
