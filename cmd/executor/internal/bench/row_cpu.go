package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// stdout_cpu and relay_cpu: what the executor's own process spends per byte it streams,
// the figure a user pays inside a container with a CPU quota (issue 16). One sample runs
// the same stream as stdout_local (local WebSocket) or relay_stream (registry + rendezvous
// + Noise), every byte verified, and reads the executor's utime + stime from
// /proc/PID/stat before and after: all its threads, its children (the `head` it runs)
// excluded. The sample is CPU-seconds per GiB of process/output delivered. The client is
// the same for both sides; it is not in the figure. Goals: stdout_cpu ≤ 0.3×, relay_cpu
// ≤ 0.4× the reference.

func measureStdoutCPU(ctx context.Context, e *Env, side *Side) (float64, error) {
	sess, err := side.shared(ctx)
	if err != nil {
		return 0, err
	}
	size := quick(e, int64(stdoutBytes), stdoutBytesQuick)
	pid := side.inst.pid()
	return cpuPerGiB(pid, size, func() error {
		_, err := streamZeros(ctx, e, sess, side.processID("stdoutcpu"), size)
		return err
	})
}

func measureRelayCPU(ctx context.Context, e *Env, side *Side) (float64, error) {
	sess, err := side.remoteShared(ctx, e)
	if err != nil {
		return 0, err
	}
	size := quick(e, int64(relayStreamBytes), relayStreamBytesQuick)
	pid := side.remote.cmd.Process.Pid
	return cpuPerGiB(pid, size, func() error {
		_, err := streamZeros(ctx, e, sess, side.processID("relaycpu"), size)
		return err
	})
}

// cpuPerGiB runs stream, which delivers size bytes, and returns the CPU-seconds process
// pid spent meanwhile per GiB.
func cpuPerGiB(pid int, size int64, stream func() error) (float64, error) {
	before, err := procCPU(pid)
	if err != nil {
		return 0, err
	}
	if err := stream(); err != nil {
		return 0, err
	}
	after, err := procCPU(pid)
	if err != nil {
		return 0, err
	}
	return (after - before).Seconds() / (float64(size) / gibibyte), nil
}

// procCPU is utime + stime of process pid (every thread, children excluded) from
// /proc/PID/stat, fields 14 and 15 (proc(5)), in clock ticks of clockTick.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("reading CPU time: %w", err)
	}
	// Field 2, the command name, is in parentheses and may hold spaces or ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, errors.New("reading CPU time: malformed /proc/PID/stat")
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3
	if len(f) < 13 {
		return 0, errors.New("reading CPU time: short /proc/PID/stat")
	}
	var ticks int64
	for _, s := range f[11:13] { // fields 14 (utime) and 15 (stime)
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("reading CPU time: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}
