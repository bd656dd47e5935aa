package bench

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/execlab/executor/executor/protocol"
)

// stdout_local: throughput of `head -c N /dev/zero` with pipes, every byte received as
// process/output over a local WebSocket, counted and checked to be zero. MiB/s; N is
// 256 MiB (16 MiB with --quick). Goal: ≥ 5× the reference.

// zeros is compared against each chunk; chunks longer than it are compared piecewise. An
// array, not a make: it lives in the binary's bss and costs no heap (and no RSS) in the
// executor processes that never run the bench (rss_idle).
var zeros [64 << 10]byte

func measureStdoutLocal(ctx context.Context, e *Env, side *Side) (float64, error) {
	sess, err := side.shared(ctx)
	if err != nil {
		return 0, err
	}
	size := quick(e, int64(stdoutBytes), stdoutBytesQuick)
	return streamZeros(ctx, e, sess, side.processID("stdout"), size)
}

// streamZeros runs `head -c size /dev/zero` with pipes on sess, checks that exactly size
// zero bytes arrive on stdout, and returns the rate in MiB/s from process/start to the
// last event.
func streamZeros(ctx context.Context, e *Env, sess *session, processID string, size int64) (float64, error) {
	if e.headPath == "" {
		return 0, missing("head(1) not found on PATH")
	}
	ctx, cancel := context.WithTimeout(ctx, streamTimeout)
	defer cancel()
	var got int64
	out, err := sess.runProcess(ctx, protocol.ProcessStartParams{
		ProcessID: processID,
		Argv:      []string{e.headPath, "-c", strconv.FormatInt(size, 10), "/dev/zero"},
		Cwd:       "file:///",
		Env:       map[string]string{},
	}, func(o protocol.ProcessOutputNotification) error {
		if o.Stream != protocol.StreamStdout {
			return fmt.Errorf("%w: %d bytes on %s", errDataLoss, len(o.Chunk), o.Stream)
		}
		for b := []byte(o.Chunk); len(b) > 0; {
			k := min(len(b), len(zeros))
			if !bytes.Equal(b[:k], zeros[:k]) {
				return fmt.Errorf("%w: non-zero byte near offset %d", errDataLoss, got)
			}
			b = b[k:]
		}
		got += int64(len(o.Chunk))
		return nil
	})
	if err != nil {
		return 0, err
	}
	if out.exitCode != 0 {
		return 0, fmt.Errorf("head exited %d", out.exitCode)
	}
	if got != size {
		return 0, fmt.Errorf("%w: received %d of %d bytes", errDataLoss, got, size)
	}
	return float64(size) / mebibyte / out.elapsed.Seconds(), nil
}
