package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/execlab/executor/cmd/executor/internal/remote"
	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/registry/client"
	"github.com/execlab/executor/relay/mux"
)

// idle_stream_memory: heap per idle authenticated stream of our remote executor at 1,000
// streams (100 with --quick), in KiB. The executor (cmd/executor/internal/remote.Run with
// an executor.Server, the code `executor remote` runs, its mux stream cap raised to the
// stream count, as `executor remote --max-streams` does) runs inside the bench process;
// the registry + rendezvous and the harnesses run in a helper process (RunHelper), so the
// bench process holds only the executor's side of each stream. A sample is the growth of
// heap in use + goroutine stacks in use (runtime.MemStats HeapInuse + StackInuse, after a
// forced GC and debug.FreeOSMemory) between "executor connected, no streams" and "every
// harness connected with a handshake, registry validation and initialize, then idle for
// memorySettle", divided by the stream count. No reference column (the reference is not
// reachable in process and its per-stream share of RSS is not separable). Goal (issue 7):
// ≤ 32 KiB.

// idleStreamEnvironment is the environment id of the measured executor.
const idleStreamEnvironment = "bench-idle-streams"

func measureIdleStreamMemory(ctx context.Context, e *Env, side *Side) (float64, error) {
	n := quick(e, idleStreams, idleStreamsQuick)
	h, err := startHelper(e, helperSpec{Kind: helperHarnesses, Harnesses: n, EnvironmentID: idleStreamEnvironment})
	if err != nil {
		return 0, err
	}
	stopHelper := sync1(h.stop)
	defer stopHelper()
	line, err := h.expect(ctx, "registry ")
	if err != nil {
		return 0, err
	}
	regURL, token, ok := strings.Cut(line, " ")
	if !ok {
		return 0, fmt.Errorf("helper: bad registry line")
	}
	bearer, err := client.NewBearer(token)
	if err != nil {
		return 0, err
	}
	// Our own transport, so that its idle keep-alive connections can be closed at the end.
	tr := &http.Transport{DialContext: (&net.Dialer{}).DialContext, MaxIdleConnsPerHost: idleDialers}
	defer tr.CloseIdleConnections()
	c, err := client.New(&client.Options{BaseURL: regURL, EnvironmentID: idleStreamEnvironment, Auth: bearer,
		HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		return 0, err
	}
	rctx, cancel := context.WithCancel(ctx)
	runDone := make(chan error, 1)
	// srv is closed by stopExecutor, after Run has returned: Run does not close it.
	srv := executor.NewServer(nil)
	go func() { // owner: this function, which cancels and waits for it below
		runDone <- remote.Run(rctx, remote.Config{
			Registry: c,
			Server:   srv,
			Mux:      &mux.Options{MaxStreams: n + mux.MaxStreams},
		})
	}()
	stopExecutor := sync1(func() {
		cancel()
		<-runDone
		srv.Close()
	})
	defer stopExecutor()

	if _, err := h.expect(ctx, "online"); err != nil {
		return 0, err
	}
	before := heapInUse()
	if err := h.send("go"); err != nil {
		return 0, err
	}
	got, err := h.expect(ctx, "ready ")
	if err != nil {
		return 0, err
	}
	if k, _ := strconv.Atoi(got); k != n {
		return 0, fmt.Errorf("%w: helper connected %s harnesses, want %d", errDataLoss, got, n)
	}
	if err := sleep(ctx, memorySettle); err != nil {
		return 0, err
	}
	after := heapInUse()
	select {
	case err := <-runDone:
		runDone <- err // for stopExecutor
		return 0, fmt.Errorf("remote executor ended during the measurement: %v", err)
	default:
	}
	// Harnesses first, so the executor sees streams end rather than a registry vanish.
	stopHelper()
	stopExecutor()
	return (float64(after) - float64(before)) / float64(n) / kibibyte, nil
}

// heapInUse returns this process's heap in use plus goroutine stacks in use, in bytes,
// after a forced collection that also returns freed memory to the OS.
func heapInUse() uint64 {
	debug.FreeOSMemory() // runs a full GC first
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sync1 returns a function that runs f on its first call only (not safe for concurrent
// use: the measuring goroutine calls it, directly or deferred).
func sync1(f func()) func() {
	done := false
	return func() {
		if !done {
			done = true
			f()
		}
	}
}
