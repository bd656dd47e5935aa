package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/execlab/executor/cmd/executor/internal/registrycmd"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/registry/rendezvous/chaos"
	"github.com/execlab/executor/registry/server"
)

// recovery_cut5s: how long a session takes to deliver output again after a 5 s outage
// (docs/reliability.md §5). One sample: a registry + rendezvous of its own behind the
// fault proxy (registry/rendezvous/chaos, in process; the registry's public URL is the
// proxy's), our `executor remote` and our harness both through the proxy, a process
// printing a line every 10 ms; once its output flows, both sides' links are cut (TCP
// close, requests answered 502) for 5 s. The figure is the time from the end of the cut
// to the arrival at the harness of the next output notification: the executor's redial,
// the harness's next recovery attempt (its back-off), connect, handshake, resume and the
// first replayed chunk. Ours only (a released executor keeps 1 MiB and has no lossless
// replay; its recovery is a different operation). Goal: ≤ 5000 ms, the harness's largest
// recovery back-off step.

func measureRecoveryCut5s(ctx context.Context, e *Env, side *Side) (float64, error) {
	rig, err := startCutRig(ctx, side)
	if err != nil {
		return 0, err
	}
	defer rig.close()
	sess, err := openRemoteSession(ctx, rig.proxyURL, rig.ri.env, rig.reg.token)
	if err != nil {
		return 0, fmt.Errorf("connecting through the fault proxy: %w%s", err, rig.ri.output.suffix())
	}
	defer sess.close()

	var mu sync.Mutex
	var cutEnd time.Time // zero until the cut is injected; guarded by mu
	flowing := make(chan struct{})
	back := make(chan time.Time, 1)
	var flowOnce, backOnce sync.Once
	onOutput := func(protocol.ProcessOutputNotification) error {
		now := time.Now()
		mu.Lock()
		end := cutEnd
		mu.Unlock()
		switch {
		case end.IsZero():
			flowOnce.Do(func() { close(flowing) })
		case now.After(end):
			backOnce.Do(func() { back <- now })
		}
		return nil
	}
	pid := side.processID("recovery")
	runCtx, cancel := context.WithTimeout(ctx, recoveryRunTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { // owner: this Measure; waited for below
		_, err := sess.runProcess(runCtx, protocol.ProcessStartParams{
			ProcessID: pid,
			Argv:      []string{"sh", "-c", recoveryTicker},
			Cwd:       "file:///",
			Env:       map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"},
		}, onOutput)
		done <- err
	}()
	stopProcess := func() error {
		_ = sess.call(ctx, protocol.MethodProcessTerminate, &protocol.ProcessTerminateParams{ProcessID: pid}, nil)
		cancel()
		return <-done
	}
	select {
	case <-flowing:
	case err := <-done:
		return 0, fmt.Errorf("the ticker ended before its output flowed: %v", err)
	case <-time.After(callTimeout):
		_ = stopProcess()
		return 0, errors.New("no output from the ticker")
	}
	mu.Lock()
	cutEnd = time.Now().Add(recoveryCut)
	err = rig.proxy.Inject(chaos.Fault{Kind: chaos.KindCut, Sides: chaos.SideBoth, For: recoveryCut})
	mu.Unlock()
	if err != nil {
		_ = stopProcess()
		return 0, fmt.Errorf("injecting the cut: %w", err)
	}
	var at time.Time
	select {
	case at = <-back:
	case <-time.After(recoveryCut + recoveryWait):
		_ = stopProcess()
		return 0, fmt.Errorf("no output within %v of the cut's end%s", recoveryWait, rig.ri.output.suffix())
	}
	_ = stopProcess() // the ticker is killed: its run ends with a signal exit, not an error
	mu.Lock()
	end := cutEnd
	mu.Unlock()
	return float64(at.Sub(end)) / float64(time.Millisecond), nil
}

// cutRig is recovery_cut5s's registry, proxy and executor; close stops them in reverse.
type cutRig struct {
	reg      *benchRegistry
	proxy    *chaos.Proxy
	proxyURL string
	ri       *remoteInstance
	stop     func()
}

func startCutRig(ctx context.Context, side *Side) (*cutRig, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the fault proxy: %w", err)
	}
	rig := &cutRig{proxyURL: "http://" + ln.Addr().String(), stop: func() {}}
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := "tok_" + hex.EncodeToString(b[:])
	tokens, err := server.ParseTokens(strings.NewReader(token + "\n"))
	if err != nil {
		ln.Close()
		return nil, err
	}
	svc, err := registrycmd.Start(ctx, registrycmd.Config{Listen: "127.0.0.1:0", DB: ":memory:", Tokens: tokens, PublicURL: rig.proxyURL})
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("starting the registry: %w", err)
	}
	rig.reg = &benchRegistry{svc: svc, token: token}
	rig.proxy, err = chaos.New(&chaos.Options{Upstream: "http://" + svc.Addr})
	if err != nil {
		ln.Close()
		_ = svc.Close()
		return nil, err
	}
	pctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { // owner: rig; close waits for it
		defer close(served)
		_ = rig.proxy.Serve(pctx, ln)
	}()
	rig.stop = func() { cancel(); <-served; _ = svc.Close() }
	if rig.ri, err = startRemoteVia(ctx, side.Target, rig.reg, rig.proxyURL, "bench-recovery"); err != nil {
		rig.stop()
		return nil, err
	}
	return rig, nil
}

func (r *cutRig) close() {
	if r.ri != nil {
		r.ri.stop()
	}
	r.stop()
}
