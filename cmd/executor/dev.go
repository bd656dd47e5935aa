package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/execlab/executor/cmd/executor/internal/registrycmd"
	"github.com/execlab/executor/cmd/executor/internal/remote"
	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/registry/client"
	"github.com/execlab/executor/registry/server"
)

func runDev(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("executor dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: executor dev [flags]

Starts, in this one process, a self-hosted registry + rendezvous (SQLite in a temporary
directory, two freshly generated tokens scoped to the environment: one with the executor
role, kept in memory, one with the harness role, written to the printed token file) and
an executor registered with it, then prints the 'executor exec' command to try from
another terminal. Stops on Ctrl-C.

Flags:
`)
		fs.PrintDefaults()
	}
	listen := fs.String("listen", "127.0.0.1:0", "registry listen address, host:port")
	envID := fs.String("environment-id", "dev", "environment id the executor registers as")
	logLevel := fs.String("log-level", envOr("EXECUTOR_LOG_LEVEL", "warn"), "log level on stderr: debug, info, warn, error")
	logFormat := logFormatFlag(fs)
	sandboxBackend := sandboxBackendFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkSandboxBackend(*sandboxBackend); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	log, err := newLogger(stderr, *logLevel, *logFormat)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "executor-dev-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// Two tokens, each scoped to this environment and one role: the executor's never
	// leaves the process; the harness's is the file 'executor exec' reads.
	token := newToken()
	execLine, err := scopedTokenLine(token, string(server.RoleExecutor), *envID)
	if err != nil {
		return err
	}
	harnessLine, err := scopedTokenLine(newToken(), string(server.RoleHarness), *envID)
	if err != nil {
		return err
	}
	tokenFile := filepath.Join(dir, "harness-token")
	if err := os.WriteFile(tokenFile, []byte(harnessLine+"\n"), 0o600); err != nil {
		return err
	}
	tokens, err := server.ParseTokens(strings.NewReader(execLine + "\n" + harnessLine + "\n"))
	if err != nil {
		return err
	}
	svc, err := registrycmd.Start(ctx, registrycmd.Config{Listen: *listen, DB: filepath.Join(dir, "registry.db"), Tokens: tokens, Logger: log})
	if err != nil {
		return err
	}
	defer svc.Close()
	auth, err := client.NewBearer(token)
	if err != nil {
		return err
	}
	c, err := client.New(&client.Options{BaseURL: svc.URL, EnvironmentID: *envID, Auth: auth, Logger: log})
	if err != nil {
		return err
	}
	exe, err := tryableExecutable(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "registry:  %s\nenvironment: %s\ntoken file: %s\n\ntry from another terminal:\n  %s exec --registry %s --environment-id %s --token-file %s -- sh -c 'echo hello from $(hostname)'\n",
		svc.URL, *envID, tokenFile, exe, svc.URL, *envID, tokenFile)
	guard := startProcessGuard(log)
	defer guard.Close() // runs after srv.Close
	srv := executor.NewServer(&executor.Options{Logger: log, Sandbox: startSandbox(ctx, *sandboxBackend, log), ProcessGuard: guard, CodexHome: codexHomeDir()})
	defer srv.Close() // created here, so closed here: Run does not close it
	err = remote.Run(ctx, remote.Config{Registry: c, Server: srv, Logger: log})
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// tryableExecutable returns the path of this binary for the command dev prints. Under
// `go run` the binary lives in the go command's temporary build directory, which is gone
// when `go run` exits and is named nowhere a user would type: dev then copies itself into
// its own directory (which lives as long as dev does) and prints that path.
func tryableExecutable(dir string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "executor", nil
	}
	if !goRunBuild(exe) {
		return exe, nil
	}
	dst := filepath.Join(dir, "executor")
	if err := copyExecutable(exe, dst); err != nil {
		return "", fmt.Errorf("copying the go run binary to %s: %w", dst, err)
	}
	return dst, nil
}

// goRunBuild reports whether exe was built by `go run` (or `go test`): a file in an "exe"
// directory below a "go-build…" work directory.
func goRunBuild(exe string) bool {
	d := filepath.Dir(exe)
	if filepath.Base(d) != "exe" {
		return false
	}
	for p := filepath.Dir(d); p != filepath.Dir(p); p = filepath.Dir(p) {
		if strings.HasPrefix(filepath.Base(p), "go-build") {
			return true
		}
	}
	return false
}

// copyExecutable copies src to a new file dst with mode 0755.
func copyExecutable(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	_, err = io.Copy(out, in)
	return err
}
