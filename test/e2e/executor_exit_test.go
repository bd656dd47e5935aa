package e2e_test

import (
	"bufio"
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestExecutorKilled_ExecExits255: `kill -9` of a remote executor (ours, through our
// registry and rendezvous) while `exec -- sh -c '…sleep 30…'` runs: its process guard kills
// the session's process group and posts the registration's exit notice, our registry
// answers connect with executor_exited, and exec stops recovering at once — it exits 255
// with "executor for environment … exited (its processes are gone)" within 5 s, instead of
// retrying for its 10-minute window as behind a partition (docs/reliability.md §5). No
// process of the session's group survives.
func TestExecutorKilled_ExecExits255(t *testing.T) {
	rig := startChaosRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"exec", "--registry", rig.Proxy, "--environment-id", rig.Env, "--token-file", rig.TokenFile,
		"--", "sh", "-c", "echo pgid $$; sleep 30 & sleep 31 & wait"}
	cmd := exec.CommandContext(ctx, remoteExecutorBin(t), args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		_ = cmd.Wait()
		t.Fatalf("no output from exec (stderr %s)", stderr.String())
	}
	pgid, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "pgid "))
	if err != nil || pgid <= 1 {
		t.Fatalf("first line %q, want \"pgid N\"", sc.Text())
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(groupMembers(pgid)) < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // the two sleeps are forked after the echo
	}
	if n := len(groupMembers(pgid)); n < 3 {
		t.Fatalf("%d live processes in group %d, want sh and two sleeps", n, pgid)
	}

	killed := time.Now()
	if err := rig.executor.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	go func() {
		for sc.Scan() { // drain until exec closes stdout
		}
	}()
	werr := cmd.Wait()
	took := time.Since(killed)
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != 255 {
		t.Fatalf("exec ended with %v after %v, want exit status 255 (stderr %s)", werr, took, stderr.String())
	}
	want := "executor for environment " + rig.Env + " exited (its processes are gone)"
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("exec stderr %q, want it to say %q", stderr.String(), want)
	}
	t.Logf("exec exited 255 %v after kill -9 of the executor", took.Round(time.Millisecond))
	if took > 5*time.Second {
		t.Errorf("exec took %v to exit after the executor's kill -9, want at most 5 s", took)
	}
	if left := groupMembers(pgid); len(left) > 0 {
		t.Errorf("processes of the session's group %d survived the executor: %v", pgid, left)
	}
}

// groupMembers lists the live (not zombie) processes whose process group is pgid.
func groupMembers(pgid int) []int {
	var out []int
	eachProc("stat", func(pid int, b []byte) {
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			return
		}
		f := strings.Fields(s[i+1:]) // state ppid pgrp …
		if len(f) < 3 || f[0] == "Z" {
			return
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			out = append(out, pid)
		}
	})
	return out
}
