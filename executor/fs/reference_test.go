package fs_test

import (
	"github.com/execlab/executor/internal/refbin"

	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/execlab/executor/executor/fs"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// TestWalk_MatchesReference runs the same fs/walk and error-path requests against each
// reference release and the Service and compares results and errors exactly.
func TestWalk_MatchesReference(t *testing.T) {
	refbin.ForEachRelease(t, testWalkMatches)
}

func testWalkMatches(t *testing.T, r refbin.Release) {
	ref := refbin.Start(t, r.Path)
	dir, err := os.MkdirTemp("/var/tmp", "walk-probe-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.MkdirAll(filepath.Join(dir, "a", "b", "c"), 0o755)
	os.MkdirAll(filepath.Join(dir, ".h", "x"), 0o755)
	os.MkdirAll(filepath.Join(dir, "d"), 0o755)
	os.WriteFile(filepath.Join(dir, "a", "f"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "tab\tname"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "bad\xffname"), nil, 0o644)
	os.Symlink(dir, filepath.Join(dir, "a", "loop"))
	os.Symlink(filepath.Join(dir, "d"), filepath.Join(dir, "dlink"))
	s := fs.New(nil)
	type opts = protocol.FsWalkOptions
	cases := []struct {
		path string
		o    opts
	}{
		{dir, opts{MaxDepth: 10, MaxDirectories: 100, MaxEntries: 100, FollowDirectorySymlinks: true}},
		{dir, opts{MaxDepth: 10, MaxDirectories: 100, MaxEntries: 100}},
		{dir, opts{MaxDepth: 0, MaxDirectories: 100, MaxEntries: 100}},
		{dir, opts{MaxDepth: 1, MaxDirectories: 100, MaxEntries: 100, PruneHiddenDirectories: true}},
		{dir, opts{MaxDepth: 10, MaxDirectories: 1, MaxEntries: 100}},
		{dir, opts{MaxDepth: 10, MaxDirectories: 2, MaxEntries: 100}},
		{dir, opts{MaxDepth: 10, MaxDirectories: 100, MaxEntries: 3}},
		{dir, opts{MaxDepth: 10, MaxDirectories: 0, MaxEntries: 3}},
		{dir, opts{MaxDepth: 10, MaxDirectories: 1, MaxEntries: 0}},
		{dir, opts{MaxDepth: 65, MaxDirectories: 1, MaxEntries: 1}},
		{filepath.Join(dir, "missing"), opts{MaxDepth: 1, MaxDirectories: 1, MaxEntries: 1}},
		{filepath.Join(dir, "a", "f"), opts{MaxDepth: 1, MaxDirectories: 1, MaxEntries: 1}},
		{filepath.Join(dir, "dlink"), opts{MaxDepth: 1, MaxDirectories: 1, MaxEntries: 10}},
	}
	for i, c := range cases {
		p := &protocol.FsWalkParams{Path: protocol.FromNative(c.path), Options: c.o}
		res, rerr := ref.Call("fs/walk", p)
		got, gerr := s.Walk(ctx, p)
		if rerr != nil || gerr != nil {
			var g *jsonwire.Error
			errors.As(gerr, &g)
			if rerr == nil || g == nil || g.Code != rerr.Code || g.Message != rerr.Message {
				t.Errorf("case %d: got %v, want %+v (ref result %s)", i, gerr, rerr, res)
			}
			continue
		}
		gj, _ := json.Marshal(got)
		var a, b any
		json.Unmarshal(gj, &a)
		json.Unmarshal(res, &b)
		aj, _ := json.Marshal(a)
		bj, _ := json.Marshal(b)
		if string(aj) != string(bj) {
			t.Errorf("case %d %+v:\n got %s\nwant %s", i, c.o, aj, bj)
		}
	}
}
