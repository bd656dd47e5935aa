package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/execlab/executor/executor/protocol"
)

// sandboxed_readfile: fs/readFile of a 1 KiB file under a read-list profile (the
// platform roots and the workspace readable, nothing else), which runs in the sandboxed
// filesystem helper on both sides (not fullRead). A sample is the median of
// oneshotPerSample calls, in milliseconds. Goal (issue 6): ≤ 0.5× the reference.

// readListJSON makes the platform roots and the workspace (both %s) readable.
const readListJSON = `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[
 {"path":{"type":"special","value":{"kind":"minimal"}},"access":"read"},
 {"path":{"type":"path","path":"%s"},"access":"read"}]}},"cwd":"%s","windowsSandboxLevel":"disabled"}`

// sandboxedReadSize is the file sandboxed_readfile reads, in bytes (issue 6: 1 KiB).
const sandboxedReadSize = 1 << 10

func measureSandboxedReadFile(ctx context.Context, e *Env, side *Side) (float64, error) {
	sess, ws, err := sandboxedSession(ctx, side)
	if err != nil {
		return 0, err
	}
	want := bytes.Repeat([]byte("0123456789abcdef"), sandboxedReadSize/16)
	path := filepath.Join(ws, "read-1k")
	if err := os.WriteFile(path, want, 0o644); err != nil {
		return 0, fmt.Errorf("writing bench file: %w", err)
	}
	sb, err := benchSandbox(readListJSON, ws)
	if err != nil {
		return 0, err
	}
	return medianLatency(e, func() (time.Duration, error) {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		start := time.Now()
		var res protocol.FsReadFileResult
		err := sess.client.Call(cctx, protocol.MethodFsReadFile, &protocol.FsReadFileParams{Path: protocol.FromNative(path), Sandbox: sb}, &res)
		elapsed := time.Since(start)
		if err != nil {
			return 0, fmt.Errorf("sandboxed fs/readFile: %w", err)
		}
		if got := []byte(res.DataBase64); !bytes.Equal(got, want) {
			return 0, fmt.Errorf("%w: sandboxed fs/readFile returned %d bytes, want the %d-byte file", errDataLoss, len(got), len(want))
		}
		return elapsed, nil
	})
}
