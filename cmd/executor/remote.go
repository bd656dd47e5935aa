package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/execlab/executor/cmd/executor/internal/remote"
	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/sandbox"
)

// defaultRemoteSessionTTL is how long `remote` keeps a detached session: longer than exec's
// 10-minute recovery window, so a harness that is still trying finds its session. A
// detached lossless process blocks at --max-unacked-bytes instead of growing, which is
// what makes a long TTL affordable (docs/reliability.md §5). `serve` keeps the
// reference's 30 s.
const defaultRemoteSessionTTL = 15 * time.Minute

// runRemote is `executor remote`: it parses the flags (each with an environment default),
// rejects usage mistakes (exit 2) and runs remote.RunCommand.
func runRemote(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("executor remote", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: executor remote --registry URL --environment-id ID [flags]

Registers this executor with an environment registry, keeps one outbound WebSocket to the
rendezvous service the registry names, and serves every harness that connects through it
(each over its own Noise-encrypted stream, authorized by the registry).

With --remote-transport direct --aws-sigv4 the registration and the WebSocket are signed
with AWS SigV4 (credentials from the AWS SDK chain) and JSON-RPC runs on the socket as is;
the credential sources below are then not used (docs/direct-transport.md).

Credentials for the registry, first match wins:
  --registration-bearer-stdin       one bearer token line on stdin
  --executor-credential-stdin       rotating credential frames on stdin, one JSON line each:
                                    {"version":1,"environment_id":ID,"token":T,"expires_at":UNIX}
                                    a new frame replaces the bearer; EOF stops the executor
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
	credStdin := fs.Bool("executor-credential-stdin", envBool("EXECUTOR_CREDENTIAL_STDIN"), "read rotating executor credential frames (JSON lines) from stdin; exit when stdin closes [EXECUTOR_CREDENTIAL_STDIN]")
	exitOnClose, err := exitOnStdinCloseDefault()
	if err != nil {
		return err
	}
	fs.BoolVar(&exitOnClose, "exit-on-stdin-close", exitOnClose, "exit (status 0) when stdin closes [CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE, EXECUTOR_EXIT_ON_STDIN_CLOSE: true or false]")
	chatgptStdin := fs.Bool("chatgpt-token-stdin", envBool("EXECUTOR_CHATGPT_TOKEN_STDIN"), "read a ChatGPT access token (one line) from stdin; the registry must be https [EXECUTOR_CHATGPT_TOKEN_STDIN]")
	accountID := fs.String("chatgpt-account-id", os.Getenv("EXECUTOR_CHATGPT_ACCOUNT_ID"), "ChatGPT account id sent with --chatgpt-token-stdin [EXECUTOR_CHATGPT_ACCOUNT_ID]")
	agentAuth := fs.Bool("use-agent-identity-auth", envBool("EXECUTOR_USE_AGENT_IDENTITY_AUTH"), "authenticate with the Agent Identity JWT in CODEX_ACCESS_TOKEN [EXECUTOR_USE_AGENT_IDENTITY_AUTH]")
	codexHome := fs.String("codex-home", os.Getenv("CODEX_HOME"), "directory holding auth.json (default ~/.codex) [CODEX_HOME]")
	maxStreams := fs.Int("max-streams", envInt("EXECUTOR_MAX_STREAMS", remote.DefaultMaxStreams), "most harness streams served at once; the reference allows 128 [EXECUTOR_MAX_STREAMS]")
	concurrent := fs.Int("concurrent-requests", 1, "requests handled at once per stream; 1 = strictly serial")
	ttl := fs.Duration("session-ttl", defaultRemoteSessionTTL, "how long a disconnected session keeps its processes before they are killed; longer than exec's --reconnect-timeout (10m), so a harness still trying finds its session (docs/reliability.md)")
	maxUnacked := fs.Int("max-unacked-bytes", envInt("EXECUTOR_MAX_UNACKED_BYTES", process.DefaultMaxUnackedBytes), "output bytes kept per process until a harness that acknowledges output (ours) has received them; past it the process blocks on its output (docs/reliability.md) [EXECUTOR_MAX_UNACKED_BYTES]")
	maxUnackedTotal := fs.Int("max-unacked-total-bytes", envInt("EXECUTOR_MAX_UNACKED_TOTAL_BYTES", 0), "the same for all processes of all sessions together, beyond 1 MiB each: past it every such process blocks on its output until acknowledgements free room; also sets the soft memory limit (this + 40 MiB) unless GOMEMLIMIT is set (default 64 MiB, or --max-unacked-bytes when larger) [EXECUTOR_MAX_UNACKED_TOTAL_BYTES]")
	ef := addExecutorFlags(fs, "log level on stderr: debug, info, warn, error [EXECUTOR_LOG_LEVEL]")
	wsAuth := wsAuthFlags(fs) // accepted only to be refused, as by the reference
	direct := directFlags(fs) // remote_direct.go
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
	if f := wsAuth(); f.Any() {
		if _, err := f.Settings(); err != nil {
			return err
		}
		return errWSAuthWithRemote
	}
	if err := checkStdinModes(map[string]bool{"registration-bearer-stdin": *bearerStdin,
		"executor-credential-stdin": *credStdin, "chatgpt-token-stdin": *chatgptStdin}); err != nil {
		return err
	}
	transport, aws, err := direct.check(map[string]bool{"registration-bearer-stdin": *bearerStdin,
		"executor-credential-stdin": *credStdin, "chatgpt-token-stdin": *chatgptStdin, "use-agent-identity-auth": *agentAuth})
	if err != nil {
		return err
	}
	if *concurrent < 1 || *maxStreams < 1 {
		return fmt.Errorf("%w: --concurrent-requests and --max-streams must be at least 1", errUsage)
	}
	if *maxUnacked < 1 || *maxUnackedTotal < 0 || *ttl <= 0 {
		return fmt.Errorf("%w: --max-unacked-bytes, --max-unacked-total-bytes and --session-ttl must be positive", errUsage)
	}
	if *maxUnackedTotal == 0 {
		*maxUnackedTotal = max(process.DefaultMaxUnackedTotalBytes, *maxUnacked)
	}
	rt, opts, err := ef.start(ctx, stderr, *maxUnackedTotal)
	if err != nil {
		return err
	}
	defer rt.close() // after RunCommand closed the server (and killed its sessions' groups)
	opts.ConcurrentRequests = *concurrent
	opts.SessionTTL = *ttl
	opts.MaxUnackedBytes = *maxUnacked
	return remote.RunCommand(ctx, &remote.Command{
		RegistryURL:   *registry,
		EnvironmentID: *envID,
		Auth: remote.AuthConfig{
			BearerStdin: *bearerStdin, CredentialStdin: *credStdin, ChatGPTStdin: *chatgptStdin,
			ChatGPTAccountID: *accountID, AgentIdentity: *agentAuth, CodexHome: *codexHome,
		},
		Transport:        transport,
		AWS:              aws,
		ExitOnStdinClose: exitOnClose,
		MaxStreams:       *maxStreams,
		Server:           opts,
		Observer:         remoteObserver(rt.tm),
		Tracer:           handshakeTracer(rt.tr),
		SpanTraceparent:  spanTraceparent(rt.tr),
		OnServer:         func(srv *executor.Server) { trackSessions(rt.tm, srv) },
		Sandbox:          func(ctx context.Context) *sandbox.Launcher { return startSandbox(ctx, *ef.sandboxBackend, rt.log) },
		Logger:           rt.log,
	}, stdin)
}

// checkStdinModes rejects more than one stdin credential mode (spec §11.1: mutually
// exclusive, a usage error as clap's in the reference).
func checkStdinModes(modes map[string]bool) error {
	var set []string
	for _, name := range []string{"registration-bearer-stdin", "executor-credential-stdin", "chatgpt-token-stdin"} {
		if modes[name] {
			set = append(set, "--"+name)
		}
	}
	if len(set) > 1 {
		return fmt.Errorf("%w: %s and %s cannot be used together", errUsage, set[0], set[1])
	}
	return nil
}

// exitOnStdinCloseDefault reads CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE (the reference's
// variable) or our alias EXECUTOR_EXIT_ON_STDIN_CLOSE. As clap does in the reference, only
// "true" and "false" are accepted; anything else, empty included, is a usage error.
func exitOnStdinCloseDefault() (bool, error) {
	for _, name := range []string{"CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE", "EXECUTOR_EXIT_ON_STDIN_CLOSE"} {
		v, ok := os.LookupEnv(name)
		if !ok {
			continue
		}
		switch v {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return false, fmt.Errorf("%w: invalid value %q for '--exit-on-stdin-close' (from %s) [possible values: true, false]", errUsage, v, name)
	}
	return false, nil
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
