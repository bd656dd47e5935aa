package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/execlab/executor/cmd/executor/internal/remote"
	"github.com/execlab/executor/cmd/executor/internal/serve"
	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/internal/wsauth"
	"github.com/execlab/executor/sandbox"
	"github.com/execlab/executor/telemetry"
)

// `executor exec-server [flags]` and `executor exec-server forward [flags]`: the command
// line of the reference's `codex exec-server`, so that a container, unit or script written
// for it runs this binary unchanged. The flags are the reference's (codex 0.171.0), parsed
// with its rules (clapargs.go), checked in its order with its exit statuses (2 for usage
// errors, 1 for the rest), then mapped onto our serve (no --remote), remote (--remote)
// and forward code. Differential tests (execserver_interop_test.go) hold each flag to both
// releases.

const execServerUsage = `Run the standalone exec-server (the command line of codex exec-server)

Usage: executor exec-server [OPTIONS] [COMMAND]

Commands:
  forward  Register an existing WebSocket exec-server as a remote environment
  help     Print this message or the help of the given subcommand

Without --remote it serves JSON-RPC on --listen (a local WebSocket or stdio), as
'executor serve'; with --remote URL --environment-id ID it registers with that environment
registry and serves harnesses through its rendezvous, as 'executor remote'.

Options:
  -c, --config <key=value>        Override a key of $CODEX_HOME/config.toml (default
                                  ~/.codex); the value is TOML, else a literal string
      --enable <FEATURE>          Enable a feature (repeatable): -c features.<name>=true
      --disable <FEATURE>         Disable a feature (repeatable): -c features.<name>=false
      --strict-config             Refuse config.toml or -c keys this version does not know
      --linux-sandbox-pid-namespace <MODE>
                                  isolate (default): sandboxed commands get their own PID
                                  namespace; inherit: they share ours and can signal other
                                  processes of the same user (dedicated hosts only)
      --linux-sandbox-transparent-tcp
                                  Route the direct TCP of every managed-network sandbox
                                  through the executor-local SOCKS5 proxy (transparent TCP)
      --tcp-upstream-proxy <HOST:PORT>
                                  HTTP CONNECT proxy raw TCP must use from the managed SOCKS
                                  listener (none runs here: managed-network starts are refused)
      --proxy-private-ips-via-upstream
                                  Send permitted private IP destinations through the upstream
                                  proxy (no managed proxy runs here: accepted, no effect)
                                  [env: CODEX_EXEC_SERVER_PROXY_PRIVATE_IPS_VIA_UPSTREAM]
      --concurrent-requests <COUNT>
                                  Requests handled at once per connection [default: 1]
      --listen <URL>              ws://IP:PORT (default ws://127.0.0.1:0), stdio or stdio://
      --ws-auth <MODE>            Authenticate WebSocket upgrades: capability-token or
                                  signed-bearer-token
      --ws-token-file <PATH>      capability-token: file holding the token
      --ws-token-sha256 <HEX>     capability-token: hex SHA-256 of the token
      --ws-shared-secret-file <PATH>
                                  signed-bearer-token: file holding the HS256 secret
      --ws-issuer <ISSUER>        signed-bearer-token: required iss claim
      --ws-audience <AUDIENCE>    signed-bearer-token: required aud claim
      --ws-max-clock-skew-seconds <SECONDS>
                                  signed-bearer-token: tolerance on exp and nbf
      --remote <URL>              Register as a remote environment with this registry
      --remote-transport <MODE>   noise (default) or direct (AWS SigV4, docs/direct-transport.md)
      --environment-id <ID>       Environment to register as
      --name <NAME>               Human-readable name (logs only)
      --use-agent-identity-auth   Register with the Agent Identity JWT in CODEX_ACCESS_TOKEN
      --registration-bearer-stdin Read one registration bearer line from stdin
      --executor-credential-stdin Read rotating credential frames from stdin; exit at EOF
      --chatgpt-token-stdin       Read a ChatGPT access token line from stdin (https only)
      --chatgpt-account-id <ID>   Account id sent with --chatgpt-token-stdin
      --aws-sigv4                 Sign direct registration with AWS SigV4 (direct only)
      --aws-profile <PROFILE>     AWS profile for --aws-sigv4
      --aws-region <REGION>       AWS signing region for --aws-sigv4
      --aws-service <SERVICE>     AWS signing service for --aws-sigv4 [default: execute-api]
      --exit-on-stdin-close       Exit (status 0) when stdin closes
                                  [env: CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE]
  -h, --help                      Print help

Without --remote, EXECUTOR_LOG_LEVEL (default warn), EXECUTOR_SANDBOX_BACKEND and
EXECUTOR_METRICS_LISTEN apply as for 'executor serve'.
`

const execServerForwardUsage = `Register an existing WebSocket exec-server as a remote environment

Usage: executor exec-server forward [OPTIONS] --remote <URL> --environment-id <ID> --connect <URL>

Registers with the environment registry at --remote as --environment-id, like 'executor
remote', but instead of running commands itself it bridges every harness stream the
rendezvous brings to a fresh WebSocket connection to --connect (an exec-server such as
'executor serve' or 'codex exec-server'). The end-to-end Noise channel ends here; JSON-RPC
messages pass through whole, both ways; either side closing closes the other.

Options:
      --connect <URL>             The exec-server to forward to: ws://HOST:PORT or wss://…
      --remote <URL>              Environment registry base URL
      --environment-id <ID>       Environment to register as
      --name <NAME>               Human-readable name (logs only)
      --use-agent-identity-auth   Register with the Agent Identity JWT in CODEX_ACCESS_TOKEN
      --registration-bearer-stdin Read one registration bearer line from stdin
      --executor-credential-stdin Read rotating credential frames from stdin; exit at EOF
      --exit-on-stdin-close       Exit (status 0) when stdin closes
                                  [env: CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE]
      --remote-transport <MODE>   noise (default); direct cannot forward
      --aws-sigv4, --aws-profile <PROFILE>, --aws-region <REGION>, --aws-service <SERVICE>
                                  direct transport only (refused with forward)
  -c, --config <key=value>, --enable <FEATURE>, --disable <FEATURE>, --strict-config,
      --linux-sandbox-pid-namespace <MODE>, --linux-sandbox-transparent-tcp,
      --tcp-upstream-proxy <HOST:PORT>, --proxy-private-ips-via-upstream
                                  Checked as for exec-server; the target runs the commands,
                                  so they change nothing here
  -h, --help                      Print help
`

// execServerArgs is the reference's option table: exec-server's, or forward's.
func execServerArgs(forward bool) []*clapArg {
	checkUpstream := func(v string) error { var u upstreamProxy; return u.Set(v) }
	checkCount := func(v string) error {
		n, err := strconv.ParseUint(v, 10, 64)
		switch {
		case err != nil:
			return errors.New("invalid digit found in string")
		case n == 0:
			return errors.New("number would be zero for non-zero type")
		}
		return nil
	}
	checkSkew := func(v string) error {
		if _, err := strconv.ParseUint(v, 10, 64); err != nil {
			return errors.New("invalid digit found in string")
		}
		return nil
	}
	nonEmpty := func(v string) error {
		if v == "" {
			return errors.New("a value is required")
		}
		return nil
	}
	remoteOnly := []string{"remote"}
	stdinModes := []string{"registration-bearer-stdin", "executor-credential-stdin", "use-agent-identity-auth", "chatgpt-token-stdin"}
	others := func(self string) []string {
		var out []string
		for _, m := range stdinModes {
			if m != self {
				out = append(out, m)
			}
		}
		return out
	}
	args := []*clapArg{
		{long: "config", short: 'c', value: "key=value", multi: true},
		{long: "enable", value: "FEATURE", multi: true},
		{long: "strict-config"},
		{long: "disable", value: "FEATURE", multi: true},
		{long: "linux-sandbox-pid-namespace", value: "MODE", check: func(v string) error {
			if v != "isolate" && v != "inherit" {
				return errors.New("expected 'isolate' or 'inherit'")
			}
			return nil
		}},
		{long: "linux-sandbox-transparent-tcp"},
		{long: "tcp-upstream-proxy", value: "HOST:PORT", check: checkUpstream},
		{long: "proxy-private-ips-via-upstream", env: "CODEX_EXEC_SERVER_PROXY_PRIVATE_IPS_VIA_UPSTREAM"},
		{long: "remote", value: "URL", requires: []string{"environment-id"}, conflicts: []string{"listen"}},
		{long: "remote-transport", value: "REMOTE_TRANSPORT", possible: []string{"noise", "direct"}, requires: remoteOnly,
			requiredIf: []string{"direct", "aws-sigv4"}},
		{long: "environment-id", value: "ID"},
		{long: "name", value: "NAME"},
		{long: "use-agent-identity-auth", requires: remoteOnly, conflicts: others("use-agent-identity-auth")},
		{long: "registration-bearer-stdin", requires: remoteOnly, conflicts: others("registration-bearer-stdin")},
		{long: "executor-credential-stdin", requires: remoteOnly, conflicts: others("executor-credential-stdin")},
		{long: "aws-sigv4", requires: remoteOnly},
		{long: "aws-profile", value: "PROFILE", requires: []string{"aws-sigv4"}},
		{long: "aws-region", value: "REGION", requires: []string{"aws-sigv4"}},
		{long: "aws-service", value: "SERVICE", requires: []string{"aws-sigv4"}},
		{long: "exit-on-stdin-close", env: "CODEX_EXEC_SERVER_EXIT_ON_STDIN_CLOSE", requires: remoteOnly},
	}
	if forward {
		return append(args, &clapArg{long: "connect", value: "URL"})
	}
	return append(args,
		&clapArg{long: "concurrent-requests", value: "COUNT", check: checkCount},
		&clapArg{long: "listen", value: "URL"},
		&clapArg{long: "ws-auth", value: "MODE", possible: []string{"capability-token", "signed-bearer-token"}},
		&clapArg{long: "ws-token-file", value: "PATH", check: nonEmpty},
		&clapArg{long: "ws-token-sha256", value: "HEX"},
		&clapArg{long: "ws-shared-secret-file", value: "PATH", check: nonEmpty},
		&clapArg{long: "ws-issuer", value: "ISSUER"},
		&clapArg{long: "ws-audience", value: "AUDIENCE"},
		&clapArg{long: "ws-max-clock-skew-seconds", value: "SECONDS", check: checkSkew},
		&clapArg{long: "chatgpt-token-stdin", requires: remoteOnly, conflicts: others("chatgpt-token-stdin")},
		&clapArg{long: "chatgpt-account-id", value: "ID", requires: []string{"chatgpt-token-stdin", "remote"}},
	)
}

// runExecServer is `executor exec-server`.
func runExecServer(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	top := &clapCommand{name: "exec-server", args: execServerArgs(false), subcommands: []string{"forward"}}
	m, err := top.parse(args, nil)
	if errors.Is(err, errClapHelp) {
		fmt.Fprint(stdout, execServerUsage)
		return nil
	}
	if err != nil {
		return err
	}
	switch m.sub {
	case "help":
		if len(m.subArgs) > 0 && m.subArgs[0] == "forward" {
			fmt.Fprint(stdout, execServerForwardUsage)
		} else {
			fmt.Fprint(stdout, execServerUsage)
		}
		return nil
	case "forward":
		// The parent's own options are parsed and then not used, as by the reference.
		return runExecServerForward(ctx, m.subArgs, stdin, stdout, stderr)
	}
	if err := checkExecServerCommon(m); err != nil {
		return err
	}
	ws := wsauth.Flags{}
	opt := func(long string) *string {
		if !m.has(long) {
			return nil
		}
		v := m.get(long, "")
		return &v
	}
	if v := opt("ws-auth"); v != nil {
		mode, err := wsauth.ParseMode(*v)
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		ws.Mode = &mode
	}
	ws.TokenFile, ws.TokenSHA256, ws.SharedSecretFile = opt("ws-token-file"), opt("ws-token-sha256"), opt("ws-shared-secret-file")
	ws.Issuer, ws.Audience = opt("ws-issuer"), opt("ws-audience")
	if v := opt("ws-max-clock-skew-seconds"); v != nil {
		n, _ := strconv.ParseUint(*v, 10, 64) // checked by the parser
		ws.MaxClockSkewSeconds = &n
	}
	// The reference's order: the --ws-* combination, then --strict-config, then the mode.
	authSettings, err := ws.Settings()
	if err != nil {
		return err
	}
	if err := execServerConfig(m).checkStrict(codexHomeDir()); err != nil {
		return err
	}
	concurrent := 1
	if v := opt("concurrent-requests"); v != nil {
		n, _ := strconv.ParseUint(*v, 10, 64) // checked by the parser
		concurrent = int(min(n, math.MaxInt32))
	}
	sb := execServerSandbox(m)
	if m.has("remote") {
		if ws.Any() {
			return errWSAuthWithRemote
		}
		if m.has("aws-service") && strings.TrimSpace(m.get("aws-service", "")) == "" {
			return errors.New("AWS service name must not be empty")
		}
		return runExecServerRemote(ctx, m, concurrent, sb, stdin, stderr, nil)
	}
	l, err := serve.ParseListen(m.get("listen", "ws://127.0.0.1:0"))
	if err != nil {
		return err
	}
	if l.Stdio && authSettings.Mode != wsauth.ModeNone {
		return serve.ErrAuthWithStdio
	}
	auth, err := wsauth.Load(authSettings)
	if err != nil {
		return err
	}
	rt, err := startExecutorRuntime(ctx, stderr, envOr("EXECUTOR_LOG_LEVEL", "warn"), envOr("EXECUTOR_LOG_FORMAT", "text"), envOr("EXECUTOR_METRICS_LISTEN", ""))
	if err != nil {
		return err
	}
	defer rt.close()
	// The defaults of `executor serve`: one unacknowledged-output budget for the whole
	// executor and the soft memory limit it implies (the reference has no such flags).
	setMemoryLimit(process.DefaultMaxUnackedTotalBytes, rt.log)
	return serve.Run(ctx, serve.Config{
		Listen: l,
		Server: executor.Options{
			MaxUnackedTotalBytes:       process.DefaultMaxUnackedTotalBytes,
			ProcessGuard:               rt.guard,
			ConcurrentRequests:         concurrent,
			Sandbox:                    sb.start(ctx, rt),
			TCPUpstreamProxy:           m.get("tcp-upstream-proxy", ""),
			LinuxSandboxTransparentTCP: m.has("linux-sandbox-transparent-tcp"),
			Observer:                   telemetry.WithTracing(executorObserver(rt.tm), rt.tr),
			CodexHome:                  codexHomeDir(),
		},
		Stdin:    stdin,
		Stdout:   stdout,
		Logger:   rt.log,
		Auth:     auth,
		OnServer: func(srv *executor.Server) { trackSessions(rt.tm, srv) },
	})
}

// checkExecServerCommon runs the start-up checks both commands begin with, in the
// reference's order: feature names, then --aws-sigv4 without the direct transport.
func checkExecServerCommon(m *clapMatches) error {
	if err := execServerConfig(m).checkFeatures(); err != nil {
		return err
	}
	if m.has("aws-sigv4") && m.get("remote-transport", "noise") != "direct" {
		return errors.New("--aws-sigv4 requires --remote-transport direct")
	}
	return nil
}

func execServerConfig(m *clapMatches) codexConfigFlags {
	return codexConfigFlags{overrides: m.all("config"), enable: m.all("enable"), disable: m.all("disable"), strict: m.has("strict-config")}
}

// execServerSandboxConfig is the sandbox the exec-server flags ask for.
type execServerSandboxConfig struct {
	backend    string
	inheritPID bool
}

func execServerSandbox(m *clapMatches) execServerSandboxConfig {
	return execServerSandboxConfig{backend: envOr("EXECUTOR_SANDBOX_BACKEND", sandbox.BackendAuto),
		inheritPID: m.get("linux-sandbox-pid-namespace", "isolate") == "inherit"}
}

// start probes the host and builds the launcher, as startSandbox does, with the PID
// namespace option.
func (c execServerSandboxConfig) start(ctx context.Context, rt *executorRuntime) *sandbox.Launcher {
	l := startSandbox(ctx, c.backend, rt.log)
	if !c.inheritPID {
		return l
	}
	rt.log.Warn("sandboxed commands share the executor's PID namespace (--linux-sandbox-pid-namespace inherit)", "component", "sandbox")
	return sandbox.NewLauncher(l.Report(), &sandbox.Options{Executable: l.Executable(), InheritPIDNamespace: true})
}

// runExecServerRemote is exec-server --remote (and, with forward set, exec-server forward):
// `executor remote` with the reference's flags and remote's defaults for the rest.
func runExecServerRemote(ctx context.Context, m *clapMatches, concurrent int, sb execServerSandboxConfig, stdin io.Reader, stderr io.Writer,
	forward *remoteForward) error {
	rt, err := startExecutorRuntime(ctx, stderr, envOr("EXECUTOR_LOG_LEVEL", "warn"), envOr("EXECUTOR_LOG_FORMAT", "text"), envOr("EXECUTOR_METRICS_LISTEN", ""))
	if err != nil {
		return err
	}
	defer rt.close()
	if name := m.get("name", ""); name != "" {
		rt.log = rt.log.With("environment_name", name)
	}
	cmd := &remote.Command{
		RegistryURL:   m.get("remote", ""),
		EnvironmentID: m.get("environment-id", ""),
		Auth: remote.AuthConfig{
			BearerStdin: m.has("registration-bearer-stdin"), CredentialStdin: m.has("executor-credential-stdin"),
			ChatGPTStdin: m.has("chatgpt-token-stdin"), ChatGPTAccountID: m.get("chatgpt-account-id", ""),
			AgentIdentity: m.has("use-agent-identity-auth"), CodexHome: envOr("CODEX_HOME", ""),
		},
		ExitOnStdinClose: m.has("exit-on-stdin-close"),
		Transport:        m.get("remote-transport", remote.TransportNoise),
		AWS: remote.AWSConfig{SigV4: m.has("aws-sigv4"), Profile: m.get("aws-profile", ""),
			Region: m.get("aws-region", ""), Service: m.get("aws-service", "")},
		MaxStreams:      remote.DefaultMaxStreams,
		Observer:        remoteObserver(rt.tm),
		Tracer:          handshakeTracer(rt.tr),
		SpanTraceparent: spanTraceparent(rt.tr),
		Logger:          rt.log,
	}
	// After the credentials are resolved, as by the reference: the environment id, then
	// (forward) the target URL.
	cmd.AfterAuth = func() error {
		if strings.TrimSpace(cmd.EnvironmentID) == "" {
			return errors.New("environment registry configuration error: environment id is required for remote exec-server registration")
		}
		if forward != nil {
			return forward.check()
		}
		return nil
	}
	if forward != nil {
		cmd.Forward = forward.bridge
		return remote.RunCommand(ctx, cmd, stdin)
	}
	// The defaults of `executor remote`: the per-process bound, the executor-wide budget and
	// the soft memory limit it implies.
	maxUnacked := process.DefaultMaxUnackedBytes
	maxUnackedTotal := max(process.DefaultMaxUnackedTotalBytes, maxUnacked)
	setMemoryLimit(maxUnackedTotal, rt.log)
	cmd.Server = executor.Options{ConcurrentRequests: concurrent, SessionTTL: defaultRemoteSessionTTL, MaxUnackedBytes: maxUnacked,
		MaxUnackedTotalBytes: maxUnackedTotal,
		ProcessGuard:         rt.guard, TCPUpstreamProxy: m.get("tcp-upstream-proxy", ""),
		LinuxSandboxTransparentTCP: m.has("linux-sandbox-transparent-tcp"),
		Observer:                   telemetry.WithTracing(executorObserver(rt.tm), rt.tr), CodexHome: codexHomeDir()}
	cmd.OnServer = func(srv *executor.Server) { trackSessions(rt.tm, srv) }
	cmd.Sandbox = func(ctx context.Context) *sandbox.Launcher { return sb.start(ctx, rt) }
	return remote.RunCommand(ctx, cmd, stdin)
}
