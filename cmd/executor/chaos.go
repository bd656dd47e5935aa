package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/execlab/executor/registry/rendezvous/chaos"
)

// faultFlags collects repeated --fault specs.
type faultFlags []chaos.Fault

func (f *faultFlags) String() string {
	s := make([]string, len(*f))
	for i, x := range *f {
		s[i] = x.String()
	}
	return strings.Join(s, "; ")
}

func (f *faultFlags) Set(v string) error {
	x, err := chaos.ParseFault(v)
	if err != nil {
		return err
	}
	*f = append(*f, x)
	return nil
}

func runChaos(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("executor chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: executor chaos --upstream URL [--fault SPEC]... [flags]

A fault-injecting proxy in front of a registry + rendezvous ('executor registry serve').
It relays the registry API unchanged and every rendezvous websocket frame by frame, and
cuts, stalls, delays, drops, duplicates or reorders them on the executor's side, the
harnesses' side or both, on a schedule (--fault) or on demand (--control).

Wiring: start the registry with --public-url set to this proxy's URL, and point
'executor remote' and your harness ('executor exec --registry-url') at this proxy.
Prints "chaos: listening on http://ADDR" (and "chaos: control on http://ADDR") on stdout.

Fault spec (space-separated key=value, one action):
  at=10s | at=16MiB             when: time since start, or bytes of frames relayed
                                (B KiB MiB GiB KB MB GB); absent: at once
  side=executor|harness|both    default both
  cut=5s                        close the side's sockets, answer its requests 502
  stall=60s                     freeze the side's TCP connections: no data, no Pong,
                                no FIN/RST; then resume
  delay=50ms                    hold every frame (order kept)
  drop=5% | dup=5% | reorder=5%  per data frame (handshakes/resets are never touched)
  for=30s                       how long delay/drop/dup/reorder last (default: ever)
Example: --fault 'at=16MiB side=executor cut=5s' --fault 'at=1m side=harness stall=60s'

Control endpoint (loopback): POST /faults with a spec as the body fires it (at once when it
has no at=); GET /stats returns the counters as JSON.

Flags:
`)
		fs.PrintDefaults()
	}
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on, host:port (port 0 picks one)")
	upstream := fs.String("upstream", "", "http:// base URL of the registry + rendezvous (required)")
	control := fs.String("control", "", "address of the control endpoint, host:port (default: none)")
	seed := fs.Uint64("seed", 1, "seed of the drop/dup/reorder random source")
	logLevel := fs.String("log-level", envOr("EXECUTOR_LOG_LEVEL", "info"), "log level on stderr: debug, info, warn, error [EXECUTOR_LOG_LEVEL]")
	logFormat := logFormatFlag(fs)
	var faults faultFlags
	fs.Var(&faults, "fault", "a fault spec (repeatable; see above)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if *upstream == "" {
		return fmt.Errorf("%w: --upstream is required", errUsage)
	}
	log, err := newLogger(stderr, *logLevel, *logFormat)
	if err != nil {
		return err
	}
	p, err := chaos.New(&chaos.Options{Upstream: *upstream, Faults: faults, Seed: *seed, Logger: log})
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", *listen, err)
	}
	defer ln.Close()
	if *control != "" {
		cln, err := net.Listen("tcp", *control)
		if err != nil {
			return fmt.Errorf("listening on %s: %w", *control, err)
		}
		csrv := &http.Server{Handler: p.ControlHandler(), ReadHeaderTimeout: chaos.DialTimeout}
		go func() { _ = csrv.Serve(cln) }()
		defer csrv.Close()
		fmt.Fprintf(stdout, "chaos: control on http://%s\n", cln.Addr())
	}
	fmt.Fprintf(stdout, "chaos: listening on http://%s\n", ln.Addr())
	if err := p.Serve(ctx, ln); err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}
