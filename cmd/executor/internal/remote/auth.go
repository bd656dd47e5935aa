package remote

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/execlab/executor/registry/client"
)

// ErrNoAuth is the reference's message when no credential source is usable
// (spec/registry-auth.md §11.1). The CLI prints it and exits 1.
var ErrNoAuth = errors.New("remote exec-server registration requires ChatGPT authentication or API key authentication; run `codex login` or set CODEX_API_KEY")

// AuthConfig selects where the registry credential comes from (spec/registry-auth.md §11.1).
// The three stdin modes are mutually exclusive; package main rejects more than one as a
// usage error before RunCommand sees them.
type AuthConfig struct {
	// BearerStdin: one bearer token line on stdin (--registration-bearer-stdin).
	BearerStdin bool
	// CredentialStdin: rotating credential frames on stdin until EOF
	// (--executor-credential-stdin); EOF after start-up stops the command.
	CredentialStdin bool
	// ChatGPTStdin: one ChatGPT access token line on stdin (--chatgpt-token-stdin), sent
	// with ChatGPTAccountID; the registry must be https.
	ChatGPTStdin     bool
	ChatGPTAccountID string
	// AgentIdentity: the Agent Identity JWT in CODEX_ACCESS_TOKEN
	// (--use-agent-identity-auth).
	AgentIdentity bool
	// CodexHome holds auth.json, the last fallback. "" means $HOME/.codex.
	CodexHome string
}

// remoteAuth picks the credential source in the reference's order (spec/registry-auth.md
// §11.1): the stdin modes, then Agent Identity, then CODEX_API_KEY, then
// $CODEX_HOME/auth.json. CredentialStdin is handled by the caller (it needs the pump).
// registry is the registry base URL (some sources are refused for some hosts); lines is
// stdin; getenv reads the environment.
func remoteAuth(in AuthConfig, registry string, lines *bufio.Reader, env environ) (client.Auth, error) {
	switch {
	case in.BearerStdin:
		line, err := readLine(lines)
		if err != nil {
			return nil, err
		}
		return client.NewBearer(line)
	case in.ChatGPTStdin:
		if err := client.CheckChatGPTTokenURL(registry); err != nil {
			return nil, err
		}
		line, err := readLine(lines)
		if err != nil {
			return nil, err
		}
		return client.NewChatGPTTokenChecked(line, in.ChatGPTAccountID)
	case in.AgentIdentity:
		tok := strings.TrimSpace(env.get("CODEX_ACCESS_TOKEN"))
		if tok == "" {
			return nil, errors.New("CODEX_ACCESS_TOKEN is required when --use-agent-identity-auth is set")
		}
		return client.NewAgentIdentity(tok, &client.AgentIdentityOptions{
			ChatGPTBaseURL: env.get("EXECUTOR_CHATGPT_BASE_URL"),
			AuthAPIBaseURL: env.get("CODEX_AGENT_IDENTITY_AUTHAPI_BASE_URL"),
		})
	}
	if strings.TrimSpace(env.get("CODEX_ACCESS_TOKEN")) != "" {
		return nil, errors.New("CODEX_ACCESS_TOKEN is set but Agent Identity auth requires --use-agent-identity-auth")
	}
	if key := strings.TrimSpace(env.get("CODEX_API_KEY")); key != "" {
		if err := client.CheckAPIKeyHost(registry); err != nil {
			return nil, err
		}
		return client.NewBearer(key)
	}
	home := in.CodexHome
	if home == "" {
		if h, err := env.homeDir(); err == nil {
			home = filepath.Join(h, ".codex")
		}
	}
	if home != "" {
		a, err := client.LoadAuthFile(filepath.Join(home, "auth.json"), &client.AuthFileOptions{
			TokenURL: env.get("CODEX_REFRESH_TOKEN_URL_OVERRIDE"),
		})
		if err == nil {
			return a, nil
		}
	}
	return nil, ErrNoAuth
}

// readLine reads one line from stdin (the bearer); stdin stays open afterwards, and what
// follows the line stays in r (for --exit-on-stdin-close).
func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading credential from stdin: %w", err)
	}
	if strings.TrimSpace(line) == "" {
		return "", client.ErrInvalidBearer
	}
	return line, nil
}
