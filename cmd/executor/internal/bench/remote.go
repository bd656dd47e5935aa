package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/execlab/executor/cmd/executor/internal/registrycmd"
	"github.com/execlab/executor/registry/rendezvous"
	"github.com/execlab/executor/registry/server"
)

// benchRegistry is our registry + rendezvous (registrycmd: in-memory SQLite store, one
// bearer token for every role), served by the bench process on 127.0.0.1 for the relay
// rows. Both sides' remote executors register with it, so they are compared behind the
// same rendezvous.
type benchRegistry struct {
	svc   *registrycmd.Service
	token string // never logged
}

// registryFor returns the run's registry, starting it on first use.
func (e *Env) registryFor(ctx context.Context) (*benchRegistry, error) {
	if e.registry != nil {
		return e.registry, nil
	}
	r, err := startRegistry(ctx)
	if err != nil {
		return nil, err
	}
	e.registry = r
	e.onClose(func() { _ = r.svc.Close() })
	return r, nil
}

// startRegistry starts a registry with a fresh random token on 127.0.0.1:0.
func startRegistry(ctx context.Context) (*benchRegistry, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("starting registry: %w", err)
	}
	token := "tok_" + hex.EncodeToString(b[:])
	tokens, err := server.ParseTokens(strings.NewReader(token + "\n"))
	if err != nil {
		return nil, fmt.Errorf("starting registry: %w", err)
	}
	// idle_stream_memory holds idleStreams harness sockets of one token in one
	// environment (its executor raises mux.MaxStreams likewise): lift the rendezvous's
	// per-environment and per-token socket bounds to match.
	svc, err := registrycmd.Start(ctx, registrycmd.Config{Listen: "127.0.0.1:0", DB: ":memory:", Tokens: tokens,
		MaxHarnessSockets: idleStreams + rendezvous.MaxHarnessSockets, MaxHarnessSocketsPerSubject: idleStreams + rendezvous.MaxHarnessSockets})
	if err != nil {
		return nil, fmt.Errorf("starting registry: %w", err)
	}
	return &benchRegistry{svc: svc, token: token}, nil
}

// waitOnline polls until an executor socket for env is open on the rendezvous, or the
// process ends, or startTimeout passes.
func (r *benchRegistry) waitOnline(ctx context.Context, env string, exited <-chan struct{}) error {
	deadline := time.Now().Add(startTimeout)
	t := time.NewTicker(onlinePoll)
	defer t.Stop()
	for {
		if _, ok := r.svc.Hub.Online(env); ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no rendezvous socket for %s within %v", env, startTimeout)
		}
		select {
		case <-t.C:
		case <-exited:
			return errors.New("exited before connecting to the rendezvous")
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// remoteInstance is one side's executor in remote mode (`executor remote` or `codex
// exec-server --remote`), registered with the run's registry as its own environment, with
// a fresh CODEX_HOME and TMPDIR under /var/tmp. Its stdin stays open (the bearer was
// written to it) until stop.
type remoteInstance struct {
	env    string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	home   string
	output *tailBuffer
	// exited is closed by the wait goroutine (owned by the instance, waited for by stop)
	// once the process has been reaped.
	exited chan struct{}
}

// startRemote starts t in remote mode as environment env and waits until it is online.
func startRemote(ctx context.Context, t Target, reg *benchRegistry, env string) (*remoteInstance, error) {
	return startRemoteVia(ctx, t, reg, reg.svc.URL, env)
}

// startRemoteVia is startRemote registering at registryURL, a proxy in front of reg
// (recovery_cut5s) or reg's own URL.
func startRemoteVia(ctx context.Context, t Target, reg *benchRegistry, registryURL, env string) (*remoteInstance, error) {
	if t.RemoteArgv == nil {
		return nil, fmt.Errorf("%s has no remote mode", t.Name)
	}
	home, tmp, err := newHome(t.Name + "-remote")
	if err != nil {
		return nil, fmt.Errorf("starting remote %s: %w", t.Name, err)
	}
	argv := t.RemoteArgv(registryURL, env)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(childEnv(home, tmp), t.Env...)
	cmd.Dir = home
	ri := &remoteInstance{env: env, cmd: cmd, home: home, output: &tailBuffer{max: stderrTail}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = ri.output, ri.output
	if ri.stdin, err = cmd.StdinPipe(); err != nil {
		os.RemoveAll(home)
		return nil, fmt.Errorf("starting remote %s: %w", t.Name, err)
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(home)
		return nil, fmt.Errorf("starting remote %s: %w", t.Name, err)
	}
	go func() { // owner: ri; stop waits for it
		_ = cmd.Wait()
		close(ri.exited)
	}()
	if _, err = io.WriteString(ri.stdin, reg.token+"\n"); err == nil {
		err = reg.waitOnline(ctx, env, ri.exited)
	}
	if err != nil {
		ri.stop()
		return nil, fmt.Errorf("starting remote %s: %w%s", t.Name, err, ri.output.suffix())
	}
	return ri, nil
}

// stop sends SIGTERM, waits up to stopTimeout, then SIGKILLs; it closes stdin and removes
// the instance's directories.
func (ri *remoteInstance) stop() {
	_ = ri.cmd.Process.Signal(syscall.SIGTERM)
	awaitOrKill(ri.exited, ri.cmd.Process)
	ri.stdin.Close()
	os.RemoveAll(ri.home)
}

// remoteEnvironment is the environment id each side registers as.
func remoteEnvironment(side *Side) string { return "bench-" + side.Target.Name }

// remoteExecutor returns the side's remote executor, (re)starting it when it is not
// running or not online.
func (s *Side) remoteExecutor(ctx context.Context, e *Env) (*benchRegistry, *remoteInstance, error) {
	reg, err := e.registryFor(ctx)
	if err != nil {
		return nil, nil, err
	}
	if s.remote != nil {
		_, online := reg.svc.Hub.Online(s.remote.env)
		select {
		case <-s.remote.exited:
			s.closeRemote()
		default:
			if !online {
				s.closeRemote()
			}
		}
	}
	if s.remote == nil {
		ri, err := startRemote(ctx, s.Target, reg, remoteEnvironment(s))
		if err != nil {
			return nil, nil, err
		}
		s.remote = ri
	}
	return reg, s.remote, nil
}

// remoteShared returns the side's long-lived harness connection to its remote executor
// through the rendezvous, (re)connecting when needed.
func (s *Side) remoteShared(ctx context.Context, e *Env) (*session, error) {
	if s.remoteSess != nil {
		select {
		case <-s.remoteSess.client.Done():
			s.remoteSess.close()
			s.remoteSess = nil
		default:
			return s.remoteSess, nil
		}
	}
	reg, ri, err := s.remoteExecutor(ctx, e)
	if err != nil {
		return nil, err
	}
	sess, err := openRemoteSession(ctx, reg.svc.URL, ri.env, reg.token)
	if err != nil {
		return nil, fmt.Errorf("connecting to remote %s: %w%s", s.Target.Name, err, ri.output.suffix())
	}
	s.remoteSess = sess
	return sess, nil
}

// closeRemote closes the side's remote session and stops its remote executor.
func (s *Side) closeRemote() {
	if s.remoteSess != nil {
		s.remoteSess.close()
		s.remoteSess = nil
	}
	if s.remote != nil {
		s.remote.stop()
		s.remote = nil
	}
}
