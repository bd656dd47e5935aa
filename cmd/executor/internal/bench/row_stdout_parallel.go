package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
)

// stdout_parallel: what one executor sustains when many harnesses stream at once (issue
// 16): parallelStreams connections to the side's executor, each running `head -c 64MiB
// /dev/zero` (4 MiB with --quick) with pipes at the same time. The sample is the
// aggregate MiB/s from the first process/start to the last process/closed. The client
// must not be the bottleneck, so it does not decode: every chunk's base64 text is compared
// with the encoding of zero bytes (zeroOutputSink), which proves every byte is zero and
// counts them at memory-compare speed. Seqs are checked as in every process row. Goal:
// ≥ 2× the reference.

func measureStdoutParallel(ctx context.Context, e *Env, side *Side) (float64, error) {
	if e.headPath == "" {
		return 0, missing("head(1) not found on PATH")
	}
	if _, err := side.shared(ctx); err != nil {
		return 0, err
	}
	size := quick(e, int64(parallelBytes), parallelBytesQuick)
	sessions := make([]*session, 0, parallelStreams)
	defer func() {
		for _, s := range sessions {
			s.close()
		}
	}()
	ids := make([]string, parallelStreams)
	for i := range parallelStreams {
		s, err := openSession(ctx, side.inst.url)
		if err != nil {
			return 0, fmt.Errorf("connecting stream %d: %w%s", i, err, side.inst.stderr.suffix())
		}
		sessions = append(sessions, s)
		ids[i] = side.processID("parallel")
	}
	sctx, cancel := context.WithTimeout(ctx, streamTimeout)
	defer cancel()
	errs := make([]error, parallelStreams)
	var wg sync.WaitGroup
	start := time.Now()
	for i, s := range sessions {
		wg.Add(1)
		go func() { // owner: measureStdoutParallel, which waits below
			defer wg.Done()
			errs[i] = runZeroStream(sctx, e, s, ids[i], size)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return float64(size*parallelStreams) / mebibyte / elapsed.Seconds(), nil
}

// runZeroStream runs `head -c size /dev/zero` on s and checks, without decoding, that
// exactly size zero bytes arrive on stdout.
func runZeroStream(ctx context.Context, e *Env, s *session, processID string, size int64) error {
	var got int64
	out, err := s.runProcessSink(ctx, protocol.ProcessStartParams{
		ProcessID: processID,
		Argv:      []string{e.headPath, "-c", strconv.FormatInt(size, 10), "/dev/zero"},
		Cwd:       "file:///",
		Env:       map[string]string{},
	}, zeroOutputSink(&got))
	if err != nil {
		return err
	}
	if out.exitCode != 0 {
		return fmt.Errorf("head exited %d", out.exitCode)
	}
	if got != size {
		return fmt.Errorf("%w: received %d of %d bytes", errDataLoss, got, size)
	}
	return nil
}

// zeroOutputSink checks process/output notifications whose chunks must be zero bytes on
// stdout, adding the decoded length of each to *got (read it after the run). The routing
// by processId has already parsed the envelope.
func zeroOutputSink(got *int64) outputSink {
	return func(n harness.Notification) (uint64, error) {
		seq, ok := memberUint(n.Params, `"seq":`)
		if !ok {
			return 0, fmt.Errorf("%w: process/output without a seq", errDataLoss)
		}
		if !bytes.Contains(n.Params, []byte(`"stream":"stdout"`)) {
			return seq, fmt.Errorf("%w: output seq %d not on stdout", errDataLoss, seq)
		}
		chunk, ok := memberString(n.Params, `"chunk":"`)
		if !ok {
			return seq, fmt.Errorf("%w: output seq %d without a chunk", errDataLoss, seq)
		}
		k, ok := zeroBase64Len(chunk)
		if !ok {
			return seq, fmt.Errorf("%w: output seq %d is not base64 of zero bytes", errDataLoss, seq)
		}
		*got += int64(k)
		return seq, nil
	}
}

// memberUint finds key (e.g. `"seq":`) in the params object p and parses the unsigned
// integer after it.
func memberUint(p []byte, key string) (uint64, bool) {
	i := bytes.Index(p, []byte(key))
	if i < 0 {
		return 0, false
	}
	rest := p[i+len(key):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	n, err := strconv.ParseUint(string(rest[:j]), 10, 64)
	return n, err == nil
}

// memberString finds key (ending in the opening quote, e.g. `"chunk":"`) and returns the
// string's raw body up to the next quote: base64 has no quotes or escapes.
func memberString(p []byte, key string) ([]byte, bool) {
	i := bytes.Index(p, []byte(key))
	if i < 0 {
		return nil, false
	}
	rest := p[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return nil, false
	}
	return rest[:j], true
}

// zeroA is the base64 of zero bytes without padding: 'A' (value 0) repeated. Built on
// first use, not at init: every executor process links this package, and a 64 KiB heap
// block at init is resident in each of them (rss_idle).
var zeroA = sync.OnceValue(func() []byte { return bytes.Repeat([]byte{'A'}, 64<<10) })

// zeroBase64Len reports whether b is the standard padded base64 of zero bytes, and how
// many: 'A' × 4k, or 'A' × (4k−1) + "=", or 'A' × (4k−2) + "==" (the unused bits of the
// last symbol are zero in each case, so the encoding is canonical).
func zeroBase64Len(b []byte) (int, bool) {
	if len(b) == 0 || len(b)%4 != 0 {
		return 0, false
	}
	pad := 0
	if b[len(b)-1] == '=' {
		pad++
		if b[len(b)-2] == '=' {
			pad++
		}
	}
	za := zeroA()
	for a := b[:len(b)-pad]; len(a) > 0; {
		k := min(len(a), len(za))
		if !bytes.Equal(a[:k], za[:k]) {
			return 0, false
		}
		a = a[k:]
	}
	return len(b)/4*3 - pad, true
}
