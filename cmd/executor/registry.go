package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/execlab/executor/cmd/executor/internal/registrycmd"
	"github.com/execlab/executor/registry/server"
	"github.com/prometheus/client_golang/prometheus"
)

const registryUsage = `usage: executor registry <serve|token> [flags]

  serve   run the self-hosted environment registry and rendezvous on one listener;
          prints its base URL (http://127.0.0.1:<port>, https:// with --tls-cert) as one
          line on stdout. Several nodes may share one PostgreSQL --db: give each its own
          --node-id and --advertise-url, and --public-url the address that balances over
          all of them (docs/operations.md)
  token   print a new random token line for the token file; the scope is required:
          --roles executor|harness|executor,harness|'*' --envs ID[,ID…]|'*'

Token file: one token per line, '#' comments; the scope follows the token:
  TOKEN roles=executor,harness|* envs=env-1,env-2|*
  sha256:<hex of the token's SHA-256> roles=… envs=…
executor role: register executors and validate harness keys; harness role: connect.
'*' grants all, explicitly. A line without roles= or envs= still means all (older files),
and serve warns about it at start-up.
`

func runRegistry(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, registryUsage)
		return fmt.Errorf("%w: missing registry subcommand", errUsage)
	}
	switch args[0] {
	case "serve":
		return runRegistryServe(ctx, args[1:], stdout, stderr)
	case "token":
		return runRegistryToken(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, registryUsage)
		return nil
	}
	fmt.Fprint(stderr, registryUsage)
	return fmt.Errorf("%w: unknown registry subcommand %q", errUsage, args[0])
}

func runRegistryServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("executor registry serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", envOr("EXECUTOR_REGISTRY_LISTEN", "127.0.0.1:0"), "address to listen on, host:port (port 0 picks one) [EXECUTOR_REGISTRY_LISTEN]")
	db := fs.String("db", envOr("EXECUTOR_REGISTRY_DB", "registry.db"), "SQLite file path, or a postgres:// DSN [EXECUTOR_REGISTRY_DB]")
	tokenFile := fs.String("token-file", envOr("EXECUTOR_REGISTRY_TOKEN_FILE", ""), "file of accepted bearer tokens (see 'executor registry help') [EXECUTOR_REGISTRY_TOKEN_FILE]")
	publicURL := fs.String("public-url", envOr("EXECUTOR_REGISTRY_PUBLIC_URL", ""), "base URL clients reach this service at (default http://<listen address>) [EXECUTOR_REGISTRY_PUBLIC_URL]")
	tlsCert := fs.String("tls-cert", envOr("EXECUTOR_REGISTRY_TLS_CERT", ""), "PEM certificate chain: serve HTTPS and wss:// (with --tls-key) [EXECUTOR_REGISTRY_TLS_CERT]")
	tlsKey := fs.String("tls-key", envOr("EXECUTOR_REGISTRY_TLS_KEY", ""), "PEM private key of --tls-cert [EXECUTOR_REGISTRY_TLS_KEY]")
	nodeID := fs.String("node-id", envOr("EXECUTOR_REGISTRY_NODE_ID", ""), "this node's id among the nodes sharing one PostgreSQL database; unique per node (default: the host name) [EXECUTOR_REGISTRY_NODE_ID]")
	advertiseURL := fs.String("advertise-url", envOr("EXECUTOR_REGISTRY_ADVERTISE_URL", ""), "http(s) base URL at which this node alone is reachable; harnesses of executors attached here are sent to it (default: --public-url) [EXECUTOR_REGISTRY_ADVERTISE_URL]")
	keyRotation := fs.Duration("key-rotation", 0, "how long one URL signing key signs before the next takes over; old keys verify until their URLs expire (default 24h)")
	maxConns := fs.Int("max-conns", 0, "open connections cap, HTTP and rendezvous sockets (default: 16384, lowered to the file-descriptor limit minus 64)")
	logLevel := fs.String("log-level", envOr("EXECUTOR_LOG_LEVEL", "warn"), "log level on stderr: debug, info, warn, error [EXECUTOR_LOG_LEVEL]")
	logFormat := logFormatFlag(fs)
	metricsAddr := metricsFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if *tokenFile == "" {
		return fmt.Errorf("%w: --token-file is required", errUsage)
	}
	if (*tlsCert == "") != (*tlsKey == "") {
		return fmt.Errorf("%w: --tls-cert and --tls-key go together", errUsage)
	}
	if *maxConns < 0 {
		return fmt.Errorf("%w: --max-conns must be positive", errUsage)
	}
	log, err := newLogger(stderr, *logLevel, *logFormat)
	if err != nil {
		return err
	}
	tokens, err := server.LoadTokens(*tokenFile)
	if err != nil {
		return err
	}
	registrycmd.CheckTokenFile(*tokenFile, log)
	for name, u := range map[string]string{"--public-url": *publicURL, "--advertise-url": *advertiseURL} {
		if strings.TrimSpace(u) != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return fmt.Errorf("%w: %s must be http:// or https://", errUsage, name)
		}
	}
	if *keyRotation < 0 || (*keyRotation > 0 && *keyRotation < time.Second) {
		return fmt.Errorf("%w: --key-rotation must be at least 1s", errUsage)
	}
	var tm *registrycmd.Metrics
	stopMetrics, err := startMetrics(*metricsAddr, log, func(reg prometheus.Registerer) { tm = registrycmd.NewMetrics(reg) })
	if err != nil {
		return err
	}
	defer stopMetrics()
	tr, stopTracing, err := startTracing(ctx, "registry", log)
	if err != nil {
		return err
	}
	defer stopTracing()
	return registrycmd.Run(ctx, registrycmd.Config{Listen: *listen, PublicURL: *publicURL, DB: *db, Tokens: tokens,
		NodeID: *nodeID, AdvertiseURL: *advertiseURL, KeyRotation: *keyRotation,
		TLSCertFile: *tlsCert, TLSKeyFile: *tlsKey, HTTP: &server.HTTPOptions{MaxConns: *maxConns}, Logger: log,
		Metrics: tm, Tracing: tr},
		func(url string) { fmt.Fprintln(stdout, url) })
}

func runRegistryToken(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("executor registry token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	roles := fs.String("roles", "", "required: comma-separated roles, executor and/or harness, or '*' for both")
	envs := fs.String("envs", "", "required: comma-separated environment ids, or '*' for every environment")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	line, err := scopedTokenLine(newToken(), *roles, *envs)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, line)
	return nil
}

// scopedTokenLine returns the token file line for token with the given scope, both parts
// required ("*" means all, explicitly): a token is never all-powerful by default.
func scopedTokenLine(token, roles, envs string) (string, error) {
	roles, envs = strings.TrimSpace(roles), strings.TrimSpace(envs)
	if roles == "" || envs == "" {
		return "", fmt.Errorf("%w: a token needs an explicit scope: --roles executor|harness|executor,harness|'*' and --envs ID[,ID…]|'*'", errUsage)
	}
	line := token + " roles=" + roles + " envs=" + envs
	if _, err := server.ParseTokens(strings.NewReader(line)); err != nil {
		return "", fmt.Errorf("%w: %v", errUsage, err)
	}
	return line, nil
}

// newToken returns a random bearer token.
func newToken() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return "xt_" + base64.RawURLEncoding.EncodeToString(b[:])
}
