package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/execlab/executor/cmd/executor/internal/remote"
	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/registry/client"
	"github.com/execlab/executor/relay/mux"
)

// errNoRemoteAuth is the reference's message when no credential source is usable
// (spec/registry-auth.md §11.1).
var errNoRemoteAuth = errors.New("remote exec-server registration requires ChatGPT authentication or API key authentication; run `codex login` or set CODEX_API_KEY")

func runRemote(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("executor remote", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: executor remote --registry URL --environment-id ID [flags]

Registers this executor with an environment registry, keeps one outbound WebSocket to the
rendezvous service the registry names, and serves every harness that connects through it
(each over its own Noise-encrypted stream, authorized by the registry).

Credentials for the registry, first match wins:
  --registration-bearer-stdin       one bearer token line on stdin
  --chatgpt-token-stdin             a ChatGPT access token line on stdin (+ --chatgpt-account-id)
  --use-agent-identity-auth         Agent Identity JWT from CODEX_ACCESS_TOKEN
  CODEX_API_KEY                     an API key (https openai.com/openai.org or loopback registries only)
  $CODEX_HOME/auth.json             ChatGPT sign-in state (default ~/.codex), refreshed automatically

Flags (each also settable by the environment variable named in brackets):
`)
		fs.PrintDefaults()
	}
	registry := fs.String("registry", os.Getenv("EXECUTOR_REGISTRY_URL"), "registry base URL, e.g. https://registry.example [EXECUTOR_REGISTRY_URL]")
	envID := fs.String("environment-id", os.Getenv("EXECUTOR_ENVIRONMENT_ID"), "environment to register as: 1-256 of A-Z a-z 0-9 - _ [EXECUTOR_ENVIRONMENT_ID]")
	_ = fs.String("name", os.Getenv("EXECUTOR_NAME"), "human-readable name for logs; not sent to the registry [EXECUTOR_NAME]")
	bearerStdin := fs.Bool("registration-bearer-stdin", envBool("EXECUTOR_REGISTRATION_BEARER_STDIN"), "read a registry bearer token (one line) from stdin [EXECUTOR_REGISTRATION_BEARER_STDIN]")
	chatgptStdin := fs.Bool("chatgpt-token-stdin", envBool("EXECUTOR_CHATGPT_TOKEN_STDIN"), "read a ChatGPT access token (one line) from stdin; the registry must be https [EXECUTOR_CHATGPT_TOKEN_STDIN]")
	accountID := fs.String("chatgpt-account-id", os.Getenv("EXECUTOR_CHATGPT_ACCOUNT_ID"), "ChatGPT account id sent with --chatgpt-token-stdin [EXECUTOR_CHATGPT_ACCOUNT_ID]")
	agentAuth := fs.Bool("use-agent-identity-auth", envBool("EXECUTOR_USE_AGENT_IDENTITY_AUTH"), "authenticate with the Agent Identity JWT in CODEX_ACCESS_TOKEN [EXECUTOR_USE_AGENT_IDENTITY_AUTH]")
	codexHome := fs.String("codex-home", os.Getenv("CODEX_HOME"), "directory holding auth.json (default ~/.codex) [CODEX_HOME]")
	maxStreams := fs.Int("max-streams", envInt("EXECUTOR_MAX_STREAMS", remote.DefaultMaxStreams), "most harness streams served at once; the reference allows 128 [EXECUTOR_MAX_STREAMS]")
	concurrent := fs.Int("concurrent-requests", 1, "requests handled at once per stream; 1 = strictly serial")
	ttl := fs.Duration("session-ttl", 0, "how long a disconnected session keeps its processes (default 30s)")
	logLevel := fs.String("log-level", envOr("EXECUTOR_LOG_LEVEL", "warn"), "log level on stderr: debug, info, warn, error [EXECUTOR_LOG_LEVEL]")
	sandboxBackend := sandboxBackendFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if strings.TrimSpace(*registry) == "" {
		return fmt.Errorf("%w: --registry is required", errUsage)
	}
	if strings.TrimSpace(*envID) == "" {
		return fmt.Errorf("%w: --environment-id is required", errUsage)
	}
	n := 0
	for _, b := range []bool{*bearerStdin, *chatgptStdin} {
		if b {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("%w: --registration-bearer-stdin and --chatgpt-token-stdin cannot be used together", errUsage)
	}
	if *concurrent < 1 || *maxStreams < 1 {
		return fmt.Errorf("%w: --concurrent-requests and --max-streams must be at least 1", errUsage)
	}
	if err := checkSandboxBackend(*sandboxBackend); err != nil {
		return err
	}
	log, err := newLogger(stderr, *logLevel)
	if err != nil {
		return err
	}
	auth, err := remoteAuth(authInputs{
		registry: *registry, bearerStdin: *bearerStdin, chatgptStdin: *chatgptStdin, accountID: *accountID,
		agent: *agentAuth, codexHome: *codexHome, stdin: stdin,
	})
	if err != nil {
		return err
	}
	tp := remote.Traceparent(os.Getenv("TRACEPARENT"))
	c, err := client.New(&client.Options{
		BaseURL: *registry, EnvironmentID: *envID, Auth: auth, Traceparent: tp, Logger: log,
	})
	if err != nil {
		return err
	}
	srv := executor.NewServer(&executor.Options{ConcurrentRequests: *concurrent, SessionTTL: *ttl, Logger: log,
		Sandbox: startSandbox(ctx, *sandboxBackend, log)})
	return remote.Run(ctx, remote.Config{
		Registry:    remote.ClientRegistry(c),
		Server:      srv,
		Mux:         &mux.Options{MaxStreams: *maxStreams},
		Traceparent: tp,
		Logger:      log,
	})
}

type authInputs struct {
	registry                  string
	bearerStdin, chatgptStdin bool
	accountID                 string
	agent                     bool
	codexHome                 string
	stdin                     io.Reader
}

// remoteAuth picks the credential source in the reference's order (spec/registry-auth.md
// §11.1).
func remoteAuth(in authInputs) (client.Auth, error) {
	switch {
	case in.bearerStdin:
		line, err := readLine(in.stdin)
		if err != nil {
			return nil, err
		}
		return client.NewBearer(line)
	case in.chatgptStdin:
		if err := client.CheckChatGPTTokenURL(in.registry); err != nil {
			return nil, err
		}
		line, err := readLine(in.stdin)
		if err != nil {
			return nil, err
		}
		return client.NewChatGPTTokenChecked(line, in.accountID)
	case in.agent:
		tok := strings.TrimSpace(os.Getenv("CODEX_ACCESS_TOKEN"))
		if tok == "" {
			return nil, errors.New("CODEX_ACCESS_TOKEN is required when --use-agent-identity-auth is set")
		}
		return client.NewAgentIdentity(tok, &client.AgentIdentityOptions{
			ChatGPTBaseURL: os.Getenv("EXECUTOR_CHATGPT_BASE_URL"),
			AuthAPIBaseURL: os.Getenv("CODEX_AGENT_IDENTITY_AUTHAPI_BASE_URL"),
		})
	}
	if strings.TrimSpace(os.Getenv("CODEX_ACCESS_TOKEN")) != "" {
		return nil, errors.New("CODEX_ACCESS_TOKEN is set but Agent Identity auth requires --use-agent-identity-auth")
	}
	if key := strings.TrimSpace(os.Getenv("CODEX_API_KEY")); key != "" {
		if err := client.CheckAPIKeyHost(in.registry); err != nil {
			return nil, err
		}
		return client.NewBearer(key)
	}
	home := in.codexHome
	if home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			home = filepath.Join(h, ".codex")
		}
	}
	if home != "" {
		a, err := client.LoadAuthFile(filepath.Join(home, "auth.json"), &client.AuthFileOptions{
			TokenURL: os.Getenv("CODEX_REFRESH_TOKEN_URL_OVERRIDE"),
		})
		if err == nil {
			return a, nil
		}
	}
	return nil, errNoRemoteAuth
}

// readLine reads one line from stdin (the bearer); stdin stays open afterwards.
func readLine(r io.Reader) (string, error) {
	if r == nil {
		return "", client.ErrInvalidBearer
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("reading credential from stdin: %w", err)
	}
	if strings.TrimSpace(line) == "" {
		return "", client.ErrInvalidBearer
	}
	return line, nil
}

func envBool(name string) bool {
	v, err := strconv.ParseBool(os.Getenv(name))
	return err == nil && v
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}
