package bench

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/execlab/executor/executor/protocol"
)

// proxy_cpu: what the executor spends per byte its network proxy relays (issue 29). One
// sample starts `sh -c 'curl … | sha256sum'` with networkProxy (row_proxy.go): curl, run
// with the proxy variables the executor set, fetches a 256 MiB body (16 MiB with --quick)
// from the bench's loopback HTTP server at localhost:PORT through an HTTP CONNECT tunnel
// (-p), and every byte is verified: curl reports the CONNECT status (200), its exit status
// (0) and the byte count on stderr, sha256sum the body's digest on stdout, both compared
// with what the server sent. The executor's utime + stime (/proc/PID/stat, every thread,
// children excluded: curl and sha256sum are the child's) is read before process/start and
// after process/closed; the sample is CPU-seconds per GiB of body. Process start-up and
// the proxy's start and close are in the figure; at 256 MiB they are noise. Goal: ≤ 0.5×
// the reference.

// proxyCurlScript is the child: $0 is the URL. Output: the digest line on stdout, the
// -w line on stderr.
const proxyCurlScript = `curl -sS -p -w '%{stderr}connect=%{http_connect} exit=%{exitcode} size=%{size_download}\n' "$0" | sha256sum`

func measureProxyCPU(ctx context.Context, e *Env, side *Side) (float64, error) {
	sess, err := side.shared(ctx)
	if err != nil {
		return 0, err
	}
	if _, err := exec.LookPath("curl"); err != nil {
		return 0, missing("curl is not on PATH: install it (apt-get install curl) to measure proxy_cpu")
	}
	srv, err := e.httpServerFor()
	if err != nil {
		return 0, err
	}
	size := quick(e, int64(proxyBodyBytes), proxyBodyBytesQuick)
	want := e.bodyDigest(srv, size)
	url := strings.Replace(srv.url, "127.0.0.1", "localhost", 1) + "/body?n=" + strconv.FormatInt(size, 10)
	var stdout, stderr []byte
	return cpuPerGiB(side.inst.pid(), size, func() error {
		ctx, cancel := context.WithTimeout(ctx, streamTimeout)
		defer cancel()
		out, err := sess.runProcess(ctx, protocol.ProcessStartParams{
			ProcessID:    side.processID("proxycpu"),
			Argv:         []string{"sh", "-c", proxyCurlScript, url},
			Cwd:          "file:///",
			Env:          proxyEnv,
			NetworkProxy: proxyConfig,
		}, func(o protocol.ProcessOutputNotification) error {
			if o.Stream == protocol.StreamStderr {
				stderr = append(stderr, o.Chunk...)
			} else {
				stdout = append(stdout, o.Chunk...)
			}
			return nil
		})
		if err != nil {
			return err
		}
		report := strings.TrimSpace(string(stderr))
		if wantReport := fmt.Sprintf("connect=200 exit=0 size=%d", size); report != wantReport {
			return fmt.Errorf("%w: curl reported %q, want %q", errDataLoss, report, wantReport)
		}
		if got, _, _ := strings.Cut(string(stdout), " "); got != want {
			return fmt.Errorf("%w: body digest %q, want %s", errDataLoss, strings.TrimSpace(string(stdout)), want)
		}
		if out.exitCode != 0 {
			return fmt.Errorf("the download exited with status %d", out.exitCode)
		}
		return nil
	})
}
