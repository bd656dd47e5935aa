package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/execlab/executor/cmd/executor/internal/registrycmd"
	"github.com/execlab/executor/registry/server"
)

const registryUsage = `usage: executor registry <serve|token> [flags]

  serve   run the self-hosted environment registry and rendezvous on one listener;
          prints its base URL (http://127.0.0.1:<port>) as one line on stdout
  token   print a new random token line for the token file (with optional scope)

Token file: one token per line, '#' comments; optional scope after the token:
  TOKEN [roles=executor,harness] [envs=env-1,env-2|*]
  sha256:<hex of the token's SHA-256> [roles=…] [envs=…]
A bare token may register executors (executor role) and connect harnesses (harness role)
for every environment.
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
	logLevel := fs.String("log-level", envOr("EXECUTOR_LOG_LEVEL", "warn"), "log level on stderr: debug, info, warn, error [EXECUTOR_LOG_LEVEL]")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if *tokenFile == "" {
		return fmt.Errorf("%w: --token-file is required", errUsage)
	}
	tokens, err := server.LoadTokens(*tokenFile)
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, *logLevel)
	if err != nil {
		return err
	}
	if strings.TrimSpace(*publicURL) != "" && !strings.HasPrefix(*publicURL, "http://") && !strings.HasPrefix(*publicURL, "https://") {
		return fmt.Errorf("%w: --public-url must be http:// or https://", errUsage)
	}
	return registrycmd.Run(ctx, registrycmd.Config{Listen: *listen, PublicURL: *publicURL, DB: *db, Tokens: tokens, Logger: log},
		func(url string) { fmt.Fprintln(stdout, url) })
}

func runRegistryToken(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("executor registry token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	roles := fs.String("roles", "", "comma-separated roles: executor, harness (default both)")
	envs := fs.String("envs", "", "comma-separated environment ids (default all)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	line := newToken()
	if *roles != "" {
		line += " roles=" + *roles
	}
	if *envs != "" {
		line += " envs=" + *envs
	}
	if _, err := server.ParseTokens(strings.NewReader(line)); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	fmt.Fprintln(stdout, line)
	return nil
}

// newToken returns a random bearer token.
func newToken() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return "xt_" + base64.RawURLEncoding.EncodeToString(b[:])
}
