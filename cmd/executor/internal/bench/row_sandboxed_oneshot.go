package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/sandbox/policy"
)

// sandboxed_oneshot: oneshot_local under the workspace-write profile (root readable,
// one workspace writable, network restricted): /bin/true through the sandbox launcher
// (bubblewrap on both sides), from process/start to process/closed. A sample is the
// median of oneshotPerSample runs, in milliseconds. Goal (issue 6): ≤ 0.5× the reference.

// sandboxedSession is what the sandboxed rows start from: bubblewrap on PATH, the side's
// shared session, and its workspace directory (created on first use) inside the
// instance's home under /var/tmp, outside its TMPDIR.
func sandboxedSession(ctx context.Context, side *Side) (*session, string, error) {
	if err := needBwrap(); err != nil {
		return nil, "", err
	}
	sess, err := side.shared(ctx)
	if err != nil {
		return nil, "", err
	}
	ws := filepath.Join(side.inst.home, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return nil, "", fmt.Errorf("creating bench workspace: %w", err)
	}
	return sess, ws, nil
}

// benchSandbox decodes a sandbox context written as JSON with %s standing for the
// workspace PathUri.
func benchSandbox(format, ws string) (*policy.Context, error) {
	var c policy.Context
	u := string(protocol.FromNative(ws))
	if err := json.Unmarshal([]byte(fmt.Sprintf(format, u, u)), &c); err != nil {
		return nil, fmt.Errorf("decoding bench sandbox: %w", err)
	}
	return &c, nil
}

// workspaceWriteJSON is the workspace-write profile; both %s are the workspace.
const workspaceWriteJSON = `{"permissions":{"type":"managed","network":"restricted","file_system":{"type":"restricted","entries":[
 {"path":{"type":"special","value":{"kind":"root"}},"access":"read"},
 {"path":{"type":"special","value":{"kind":"project_roots"}},"access":"write"}]}},
 "cwd":"%s","workspaceRoots":["%s"],"windowsSandboxLevel":"disabled"}`

func measureSandboxedOneshot(ctx context.Context, e *Env, side *Side) (float64, error) {
	sess, ws, err := sandboxedSession(ctx, side)
	if err != nil {
		return 0, err
	}
	sb, err := benchSandbox(workspaceWriteJSON, ws)
	if err != nil {
		return 0, err
	}
	return medianLatency(e, func() (time.Duration, error) {
		return sess.runQuiet(ctx, protocol.ProcessStartParams{
			ProcessID: side.processID("sandboxed-oneshot"),
			Argv:      []string{"/bin/true"},
			Cwd:       protocol.FromNative(ws),
			// PATH: the reference looks bwrap up on the request PATH.
			Env:     map[string]string{"PATH": "/usr/bin:/bin"},
			Sandbox: sb,
		}, "sandboxed /bin/true")
	})
}
