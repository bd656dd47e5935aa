package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/execlab/executor/executor/protocol"
)

// shell_snapshot_warm: `bash -lc true` started with a shellSnapshot whose capture is
// already cached in the session (spec/capabilities-0.171.0.md §3): the executor rewrites
// it to `bash -pc` sourcing the saved state (a small ~/.bashrc: an export, a function,
// an alias, an option), from process/start to process/closed. One unmeasured start per
// sample warms the cache (the capture runs there). A sample is the median of
// oneshotPerSample runs, in milliseconds. Goal (issue 28): ≤ 0.5× the reference.

// snapshotBashrc is the bench user's ~/.bashrc.
const snapshotBashrc = `export BENCH_RC=1
bench_fn() { echo "bench $*"; }
alias ll='ls -l'
set -o noclobber
`

// snapshotHome returns the side's bench HOME (created on first use) holding
// snapshotBashrc, inside the instance's home under /var/tmp.
func snapshotHome(side *Side) (string, error) {
	home := filepath.Join(side.inst.home, "snapshot-home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return "", fmt.Errorf("creating snapshot bench home: %w", err)
	}
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte(snapshotBashrc), 0o644); err != nil {
		return "", fmt.Errorf("writing snapshot bench .bashrc: %w", err)
	}
	return home, nil
}

func measureShellSnapshotWarm(ctx context.Context, e *Env, side *Side) (float64, error) {
	sess, err := side.shared(ctx)
	if err != nil {
		return 0, err
	}
	home, err := snapshotHome(side)
	if err != nil {
		return 0, err
	}
	snap, err := json.Marshal(map[string]any{"scopeId": "bench:" + side.processID("scope"),
		"shell": map[string]string{"name": "bash", "path": "/bin/bash"}})
	if err != nil {
		return 0, fmt.Errorf("encoding shellSnapshot: %w", err)
	}
	once := func() (time.Duration, error) {
		return sess.runQuiet(ctx, protocol.ProcessStartParams{
			ProcessID:     side.processID("snapshot"),
			Argv:          []string{"/bin/bash", "-lc", "true"},
			Cwd:           protocol.FromNative(home),
			Env:           map[string]string{"PATH": "/usr/bin:/bin", "HOME": home},
			ShellSnapshot: snap,
		}, "the snapshotted true")
	}
	if _, err := once(); err != nil { // warm: this start captures
		return 0, fmt.Errorf("warming the snapshot: %w", err)
	}
	return medianLatency(e, once)
}
