package shellsnap

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRewriteBashFile(t *testing.T) {
	s := &Snapshot{Kind: KindBash, State: "set -o noclobber"}
	rw := Rewrite([]string{"/bin/bash", "-lc", "echo hi", "a0", "a1"}, s, true)
	want := "set +o privileged\nif ! . /dev/fd/15 >/dev/null; then printf 'failed to restore shell snapshot\\n' >&2; fi\necho hi"
	if rw.Argv[0] != "/bin/bash" || rw.Argv[1] != "-pc" || rw.Argv[2] != want || rw.Argv[3] != "a0" || rw.Argv[4] != "a1" {
		t.Fatalf("argv %q", rw.Argv)
	}
	if rw.ChunkEnv != nil || rw.StateFile != "set -o noclobber\nexec 15<&-\n" {
		t.Fatalf("transport %q %v", rw.StateFile, rw.ChunkEnv)
	}
}

func TestRewriteZshFile(t *testing.T) {
	rw := Rewrite([]string{"/bin/zsh", "-lc", "x"}, &Snapshot{Kind: KindZsh, State: "s"}, true)
	if rw.Argv[1] != "-fc" || !strings.HasPrefix(rw.Argv[2], "setopt RCS\nif ! . /dev/fd/15 ") {
		t.Fatalf("argv %q", rw.Argv)
	}
	if !strings.Contains(rw.StateFile, "exec {__codex_fd}<&-") {
		t.Fatalf("state file %q", rw.StateFile)
	}
}

func TestRewriteEnvTransport(t *testing.T) {
	state := strings.Repeat("é", EnvChunkBytes+1) // 2 bytes per rune: 2 full chunks and a bit
	for _, k := range []Kind{KindSh, KindBash} {
		rw := Rewrite([]string{"/bin/sh", "-lc", "x"}, &Snapshot{Kind: k, State: state}, k == KindSh)
		if rw.StateFile != "" || len(rw.ChunkEnv) != 3 {
			t.Fatalf("%v: %d chunks, file %d bytes", k, len(rw.ChunkEnv), len(rw.StateFile))
		}
		var joined strings.Builder
		for i := range 3 {
			c := rw.ChunkEnv[envChunkPrefix+string(rune('0'+i))]
			if len(c) > EnvChunkBytes || !strings.HasPrefix(c, "é") {
				t.Fatalf("chunk %d: %d bytes, starts %q", i, len(c), c[:2])
			}
			joined.WriteString(c)
		}
		if joined.String() != state {
			t.Fatal("chunks do not rebuild the state")
		}
		wantRestore := "if ! eval \"unset __CODEX_SHELL_SNAPSHOT_STATE_0 __CODEX_SHELL_SNAPSHOT_STATE_1 __CODEX_SHELL_SNAPSHOT_STATE_2\n${__CODEX_SHELL_SNAPSHOT_STATE_0}${__CODEX_SHELL_SNAPSHOT_STATE_1}${__CODEX_SHELL_SNAPSHOT_STATE_2}\" >/dev/null; "
		if !strings.Contains(rw.Argv[2], wantRestore) || !strings.HasSuffix(rw.Argv[2], "fi\nx") {
			t.Fatalf("%v: script %q", k, rw.Argv[2])
		}
	}
	// An empty state still sends one (empty) chunk, as the reference's sh rewrite shows.
	rw := Rewrite([]string{"/bin/sh", "-lc", "x"}, &Snapshot{Kind: KindSh}, false)
	if v, ok := rw.ChunkEnv[envChunkPrefix+"0"]; !ok || v != "" || rw.Argv[1] != "-c" {
		t.Fatalf("empty state: %v %q", rw.ChunkEnv, rw.Argv)
	}
}

func TestChunksKeepUTF8(t *testing.T) {
	state := "a" + strings.Repeat("é", EnvChunkBytes)
	cs := chunks(state, EnvChunkBytes)
	if strings.Join(cs, "") != state {
		t.Fatal("chunks do not rebuild the state")
	}
	for i, c := range cs {
		if !utf8.ValidString(c) || len(c) > EnvChunkBytes {
			t.Fatalf("chunk %d: %d bytes, valid %v", i, len(c), utf8.ValidString(c))
		}
	}
}
