package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/execlab/executor/sandbox"
)

// sandboxBackendFlag registers --sandbox-backend (spec/sandbox.md §3.3) on fs.
func sandboxBackendFlag(fs *flag.FlagSet) *string {
	return fs.String("sandbox-backend", envOr("EXECUTOR_SANDBOX_BACKEND", sandbox.BackendAuto),
		"sandbox backend for requests that carry sandbox intent: auto, bubblewrap or landlock (degraded: Landlock + seccomp) [EXECUTOR_SANDBOX_BACKEND]")
}

func checkSandboxBackend(b string) error {
	switch b {
	case sandbox.BackendAuto, sandbox.BackendBubblewrap, sandbox.BackendLandlock:
		return nil
	}
	return fmt.Errorf("%w: --sandbox-backend must be auto, bubblewrap or landlock, got %q", errUsage, b)
}

// startSandbox probes the host once, logs the one startup line and returns the
// launcher every server of this process shares. A forced backend the host cannot
// provide leaves backend "none": requests with sandbox intent then fail closed.
func startSandbox(ctx context.Context, backend string, log *slog.Logger) *sandbox.Launcher {
	r := sandbox.Probe(ctx, &sandbox.ProbeOptions{Backend: backend})
	level := slog.LevelInfo
	if r.Backend == sandbox.BackendNone || (backend != sandbox.BackendAuto && r.Backend != backend) {
		level = slog.LevelWarn
	}
	log.Log(ctx, level, r.LogLine(), "component", "sandbox", "requested", backend)
	for _, w := range r.Warnings {
		log.Warn("sandbox probe warning", "component", "sandbox", "warning", w)
	}
	return sandbox.NewLauncher(r, nil)
}

// runSandboxInfo implements `executor sandbox-info`: the probe result as JSON, the same
// object environment/info reports as sandboxSupport.
func runSandboxInfo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("executor sandbox-info", flag.ContinueOnError)
	fs.SetOutput(stderr)
	backend := sandboxBackendFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if err := checkSandboxBackend(*backend); err != nil {
		return err
	}
	r := sandbox.Probe(ctx, &sandbox.ProbeOptions{Backend: *backend})
	b, err := json.MarshalIndent(&r, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding sandbox report: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}
