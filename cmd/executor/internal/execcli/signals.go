package execcli

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/execlab/executor/executor/protocol"
)

// signals returns the channel of local signals to forward: Config.Signals, or os/signal
// delivery of forwardedSignals (and SIGWINCH with a PTY).
func (r *runner) signals() (<-chan os.Signal, func()) {
	if r.cfg.Signals != nil {
		return r.cfg.Signals, func() {}
	}
	ch := make(chan os.Signal, 8)
	sigs := forwardedSignals
	if r.tty && winchSignal != nil {
		sigs = append(append([]os.Signal(nil), sigs...), winchSignal)
	}
	signal.Notify(ch, sigs...)
	return ch, func() { signal.Stop(ch) }
}

// forwardSignals forwards local signals until ctx ends.
//
// Mapping: with process/sendSignal (our executors) SIGINT, SIGTERM, SIGHUP and SIGQUIT
// become INT, TERM, HUP and QUIT for the remote process group. Without it (released
// executors) SIGINT becomes process/signal "interrupt", the only signal that exists, and
// SIGTERM, SIGHUP and SIGQUIT become process/terminate (SIGKILL: exit 137 with pipes),
// said once on stderr. SIGWINCH resizes the remote PTY (process/resizePty) when the
// executor can. With -t, Ctrl-C is not a local signal: the raw terminal sends it as a
// byte and the remote terminal raises SIGINT.
//
// When TERM, HUP or QUIT cannot be forwarded at all (the connection is gone), Run ends
// with exit status 128+N, as if the signal had killed it.
func (r *runner) forwardSignals(ctx context.Context, sigs <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case s := <-sigs:
			r.forward(ctx, s)
		}
	}
}

func (r *runner) forward(ctx context.Context, s os.Signal) {
	if winchSignal != nil && s == winchSignal {
		r.resize(ctx)
		return
	}
	name, ok := posixName(s)
	if !ok {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, signalCallTimeout)
	defer cancel()
	var err error
	switch {
	case r.caps.ProcessSendSignal:
		err = r.c.SendSignal(cctx, r.pid, name)
	case name == protocol.SignalINT:
		err = r.c.SignalProcess(cctx, r.pid, protocol.SignalInterrupt)
	default:
		r.out.once("signal", "executor exec: forwarding SIG"+string(name)+" not supported by this executor; terminating the remote command\n")
		_, err = r.c.TerminateProcess(cctx, r.pid)
	}
	if err != nil && ctx.Err() == nil && name != protocol.SignalINT {
		r.out.printf("executor exec: forwarding SIG%s: %v\n", name, err)
		if n, ok := s.(syscall.Signal); ok {
			r.cancel(&ExitError{Code: 128 + int(n)})
		}
	}
}

// resize sends the local terminal's size to the remote PTY.
func (r *runner) resize(ctx context.Context) {
	size, ok := r.localSize()
	if !ok {
		return
	}
	if !r.caps.ProcessResizePty {
		r.out.once("resize", "executor exec: terminal resize not supported by this executor; the remote terminal keeps its size\n")
		return
	}
	cctx, cancel := context.WithTimeout(ctx, signalCallTimeout)
	defer cancel()
	if _, err := r.c.ResizePty(cctx, r.pid, size); err != nil && ctx.Err() == nil {
		r.log.Debug("resize failed", "error", err)
	}
}
