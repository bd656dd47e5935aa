package bench

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/execlab/executor/executor/protocol"
)

// http_stream_local: http/request GET of a 256 MiB body (16 MiB with --quick) from a
// loopback server in the bench process, streamResponse true, every byte received as
// http/request/bodyDelta over a local WebSocket and compared with what the server sent.
// MiB/s from the request to the terminal delta. Goal: ≥ 2× the reference.
//
// http_stream_rss: the same stream on a freshly started executor with one initialized
// connection, reporting how far its resident memory rose above where it stood before the
// request: VmHWM after the stream minus VmRSS before it, with the high-water mark reset
// first (`5` to /proc/PID/clear_refs), in MiB. Goal (issue 7): ours ≤ 32 MiB; the
// reference is shown for comparison.

func measureHTTPStreamLocal(ctx context.Context, e *Env, side *Side) (float64, error) {
	sess, err := side.shared(ctx)
	if err != nil {
		return 0, err
	}
	elapsed, size, err := streamHTTP(ctx, e, side, sess)
	if err != nil {
		return 0, err
	}
	return float64(size) / mebibyte / elapsed.Seconds(), nil
}

func measureHTTPStreamRSS(ctx context.Context, e *Env, side *Side) (float64, error) {
	// A fresh executor per sample: a long-lived one may already hold memory freed by
	// earlier rows, which would hide the stream's growth.
	inst, sess, err := startConnected(ctx, side.Target)
	if err != nil {
		return 0, err
	}
	defer inst.stop()
	defer sess.close()
	pid := inst.pid()
	if err := resetPeakRSS(pid); err != nil {
		return 0, err
	}
	before, err := procStatusKiB(pid, "VmRSS")
	if err != nil {
		return 0, err
	}
	if _, _, err := streamHTTP(ctx, e, side, sess); err != nil {
		return 0, err
	}
	peak, err := procStatusKiB(pid, "VmHWM")
	if err != nil {
		return 0, err
	}
	return float64(max(peak-before, 0)) / kibibyte, nil
}

// streamHTTP runs one streamed http/request of the run's body size on sess and checks
// every delta: seq contiguous from 1, bytes equal to the server's, a terminal done frame
// without error, nothing after it. It returns the time from sending the request to the
// terminal frame.
func streamHTTP(ctx context.Context, e *Env, side *Side, sess *session) (time.Duration, int64, error) {
	srv, err := e.httpServerFor()
	if err != nil {
		return 0, 0, err
	}
	size := quick(e, int64(httpBodyBytes), httpBodyBytesQuick)
	ctx, cancel := context.WithTimeout(ctx, streamTimeout)
	defer cancel()
	reqID := side.processID("http")
	var (
		got      int64
		nextSeq  uint64 = 1
		firstErr error
		finished bool
		done     = make(chan struct{})
		doneAt   time.Time
	)
	// The handler runs on the client's read loop, one delta at a time; its variables are
	// read by this goroutine only after done is closed.
	unregister, err := sess.onBody(reqID, func(d *bodyDelta) {
		if finished {
			return
		}
		fail := func(err error) {
			if firstErr == nil {
				firstErr = err
			}
		}
		if d.Seq != nextSeq {
			fail(fmt.Errorf("%w: bodyDelta seq %d, want %d", errDataLoss, d.Seq, nextSeq))
		}
		nextSeq = d.Seq + 1
		k := len(d.Delta.buf)
		if err := srv.check(d.Delta.buf, got); err != nil {
			fail(err)
		}
		got += int64(k)
		if d.Done {
			if d.Error != nil {
				fail(fmt.Errorf("body stream ended with an error after %d bytes", got))
			}
			finished, doneAt = true, time.Now()
			close(done)
		}
	})
	if err != nil {
		return 0, 0, err
	}
	defer unregister()
	start := time.Now()
	var res protocol.HTTPRequestResult
	err = sess.call(ctx, protocol.MethodHTTPRequest, protocol.HTTPRequestParams{
		Method: http.MethodGet, URL: srv.url + "/body?n=" + strconv.FormatInt(size, 10),
		RequestID: reqID, StreamResponse: true,
	}, &res)
	// Until done is closed the handler may still write its variables: no early return
	// below reads them.
	if err != nil {
		return 0, 0, err
	}
	if res.Status != http.StatusOK {
		return 0, 0, fmt.Errorf("http/request: status %d, want 200", res.Status)
	}
	select {
	case <-done:
	case <-ctx.Done():
		return 0, 0, fmt.Errorf("waiting for the body of %s: %w", reqID, ctx.Err())
	case <-sess.client.Done():
		return 0, 0, fmt.Errorf("waiting for the body of %s: connection ended: %w", reqID, sess.client.Err())
	}
	if firstErr != nil {
		return 0, 0, firstErr
	}
	if got != size {
		return 0, 0, fmt.Errorf("%w: received %d of %d body bytes", errDataLoss, got, size)
	}
	return doneAt.Sub(start), size, nil
}
