package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/execlab/executor/registry/rendezvous"
)

// rendezvous_idle_memory: memory per idle websocket on our rendezvous at 10,000 sockets
// (500 with --quick), in KB (1 KB = 1000 bytes). The rendezvous (registry/rendezvous.Hub
// with its default socket options, behind net/http on 127.0.0.1) runs inside the bench
// process; a helper process (RunHelper) holds the client ends: half executor sockets, one
// per environment, and half harness sockets, each claiming a stream of its environment
// with a resume frame. A sample is the growth of heap in use + goroutine stacks in use
// (after a forced GC and debug.FreeOSMemory) from before the first dial to every socket
// attached (rendezvous Stats) plus memorySettle, divided by the socket count. No reference
// column. Goal (issue 7): ≤ 25 KB.

func measureRendezvousIdleMemory(ctx context.Context, e *Env, side *Side) (float64, error) {
	sockets := quick(e, rendezvousSockets, rendezvousSocketsQuick)
	envs := sockets / 2
	if err := raiseNoFile(uint64(sockets + fdHeadroom)); err != nil {
		return 0, err
	}
	signer := rendezvous.NewRandomSigner()
	hub, err := rendezvous.New(&rendezvous.Options{Signer: signer})
	if err != nil {
		return 0, err
	}
	defer hub.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("listening for the rendezvous: %w", err)
	}
	srv := &http.Server{Handler: hub, ReadHeaderTimeout: callTimeout}
	served := make(chan struct{})
	go func() { // owner: this function, which closes the server and waits below
		defer close(served)
		_ = srv.Serve(ln)
	}()
	defer func() {
		_ = srv.Close() // hijacked sockets are the hub's, closed by hub.Close
		<-served
	}()

	base := "ws://" + ln.Addr().String()
	exp, hexp := time.Now().Add(time.Hour), time.Now().Add(rendezvous.HarnessURLTTL) // within each role's lifetime
	spec := helperSpec{Kind: helperSockets, Sockets: make([]helperSocket, 0, 2*envs)}
	for i := range envs {
		spec.Sockets = append(spec.Sockets, helperSocket{URL: signer.URL(base, rendezvous.Claims{
			Role: rendezvous.RoleEnvironment, EnvironmentID: "env-" + strconv.Itoa(i), Generation: 1, Expires: exp})})
	}
	for i := range envs {
		spec.Sockets = append(spec.Sockets, helperSocket{URL: signer.URL(base, rendezvous.Claims{
			Role: rendezvous.RoleHarness, EnvironmentID: "env-" + strconv.Itoa(i), Generation: 1, Expires: hexp}),
			Stream: fmt.Sprintf("%036d", i)})
	}
	before := heapInUse()
	h, err := startHelper(e, spec)
	if err != nil {
		return 0, err
	}
	defer h.stop()
	got, err := h.expect(ctx, "ready ")
	if err != nil {
		return 0, err
	}
	if k, _ := strconv.Atoi(got); k != len(spec.Sockets) {
		return 0, fmt.Errorf("%w: helper opened %s sockets, want %d", errDataLoss, got, len(spec.Sockets))
	}
	deadline := time.Now().Add(helperTimeout)
	for {
		st := hub.Stats()
		if st.ExecutorSockets == int64(envs) && st.HarnessSockets == int64(envs) {
			break
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%w: %d executor and %d harness sockets attached, want %d each", errDataLoss, st.ExecutorSockets, st.HarnessSockets, envs)
		}
		if err := sleep(ctx, onlinePoll); err != nil {
			return 0, err
		}
	}
	if err := sleep(ctx, memorySettle); err != nil {
		return 0, err
	}
	after := heapInUse()
	if st := hub.Stats(); st.Dropped != 0 || st.ClaimConflicts != 0 {
		return 0, fmt.Errorf("%w: rendezvous dropped %d frames, %d claim conflicts", errDataLoss, st.Dropped, st.ClaimConflicts)
	}
	return (float64(after) - float64(before)) / float64(len(spec.Sockets)) / kilobyte, nil
}
