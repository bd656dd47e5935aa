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

// walk_local: fs/walk of a 50,000-entry tree (2,000 with --quick) of walkFilesPerDir empty
// files per directory, over a local WebSocket, in milliseconds. The executor's 4 MiB
// response budget (spec/jsonrpc.md §3.6) cannot hold 50,000 entries under a /var/tmp path,
// so the tree is split into parts of at most walkEntriesPerCall entries and a sample walks
// every part, one fs/walk each; it must return every entry (directories and files counted
// separately), no errors and truncated false. Goal: ≤ 0.5× the reference.

// walkTree is the tree walk_local walks, created once per Run under /var/tmp.
type walkTree struct {
	parts      []string // roots walked, one fs/walk each
	dirsPer    int      // directories per part
	entriesPer int      // entries per part (directories + files)
}

// walkTreeFor returns the run's tree, creating it on first use: parts p0…pN-1, each with
// dirsPer directories of walkFilesPerDir empty files.
func (e *Env) walkTreeFor() (*walkTree, error) {
	if e.walkTree != nil {
		return e.walkTree, nil
	}
	total := quick(e, walkEntries, walkEntriesQuick)
	perDir := walkFilesPerDir + 1
	nParts := (total + walkEntriesPerCall - 1) / walkEntriesPerCall
	t := &walkTree{dirsPer: total / nParts / perDir}
	t.entriesPer = t.dirsPer * perDir
	if t.entriesPer*nParts != total {
		return nil, fmt.Errorf("walk tree: %d entries do not split into %d parts of whole directories", total, nParts)
	}
	root, err := os.MkdirTemp("/var/tmp", "executor-bench-walk-")
	if err != nil {
		return nil, fmt.Errorf("creating walk tree: %w", err)
	}
	for p := range nParts {
		part := filepath.Join(root, fmt.Sprintf("p%d", p))
		for d := range t.dirsPer {
			dir := filepath.Join(part, fmt.Sprintf("d%03d", d))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				os.RemoveAll(root)
				return nil, fmt.Errorf("creating walk tree: %w", err)
			}
			for f := range walkFilesPerDir {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d", f)), nil, 0o644); err != nil {
					os.RemoveAll(root)
					return nil, fmt.Errorf("creating walk tree: %w", err)
				}
			}
		}
		t.parts = append(t.parts, part)
	}
	e.walkTree = t
	e.onClose(func() { os.RemoveAll(root) })
	return t, nil
}

func measureWalkLocal(ctx context.Context, e *Env, side *Side) (float64, error) {
	t, sess, err := withShared(ctx, side, e.walkTreeFor)
	if err != nil {
		return 0, err
	}
	var elapsed time.Duration
	for _, part := range t.parts {
		// The timer covers request → response received (envelope parsed, result kept
		// raw); decoding the entries into Go structs is the bench client's own cost, the
		// same for both sides, and happens after it.
		var raw json.RawMessage
		start := time.Now()
		err := sess.call(ctx, protocol.MethodFsWalk, protocol.FsWalkParams{
			Path: protocol.FromNative(part),
			Options: protocol.FsWalkOptions{
				MaxDepth: walkMaxDepth, MaxDirectories: walkMaxDirectories, MaxEntries: walkMaxEntries,
			},
		}, &raw)
		elapsed += time.Since(start)
		if err != nil {
			return 0, err
		}
		var res protocol.FsWalkResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return 0, fmt.Errorf("decoding fs/walk result: %w", err)
		}
		dirs, files := 0, 0
		for _, en := range res.Entries {
			switch en.Kind {
			case protocol.FsWalkKindDirectory:
				dirs++
			case protocol.FsWalkKindFile:
				files++
			}
		}
		if dirs != t.dirsPer || files != t.entriesPer-t.dirsPer || len(res.Errors) != 0 || res.Truncated {
			return 0, fmt.Errorf("%w: walk of a part got %d directories, %d files, %d errors, truncated %v; want %d, %d, 0, false",
				errDataLoss, dirs, files, len(res.Errors), res.Truncated, t.dirsPer, t.entriesPer-t.dirsPer)
		}
	}
	return float64(elapsed) / float64(time.Millisecond), nil
}
