package main

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"testing"
)

// TestSetMemoryLimit: without GOMEMLIMIT the soft limit is the budget plus memoryBase;
// with it the runtime's (already applied) limit is left alone.
func TestSetMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	t.Setenv("GOMEMLIMIT", "")
	if got := setMemoryLimit(64<<20, log); got != old {
		t.Errorf("with GOMEMLIMIT set: limit %d, want the runtime's %d untouched", got, old)
	}
}

// TestSetMemoryLimit_FromBudget is TestSetMemoryLimit without GOMEMLIMIT in the
// environment.
func TestSetMemoryLimit_FromBudget(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "") // restored after the test
	if err := os.Unsetenv("GOMEMLIMIT"); err != nil {
		t.Fatal(err)
	}
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if got, want := setMemoryLimit(64<<20, log), int64(64<<20+memoryBase); got != want {
		t.Errorf("limit %d, want budget + memoryBase = %d", got, want)
	}
	if got := debug.SetMemoryLimit(-1); got != 64<<20+memoryBase {
		t.Errorf("runtime limit %d, want %d", got, 64<<20+memoryBase)
	}
}

// TestUnackedTotalFlag_Usage: a negative --max-unacked-total-bytes is a usage error (exit
// 2) for serve and remote, as are their other bounds; so is one from its environment
// variable, EXECUTOR_MAX_UNACKED_TOTAL_BYTES.
func TestUnackedTotalFlag_Usage(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--max-unacked-total-bytes", "-1"},
		{"remote", "--registry", "http://127.0.0.1:1", "--environment-id", "e", "--max-unacked-total-bytes", "-1"},
	} {
		var stderr bytes.Buffer
		if code := run(args, strings.NewReader(""), io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), "--max-unacked-total-bytes") {
			t.Errorf("%q: exit %d, stderr %q; want 2 naming the flag", args, code, stderr.String())
		}
	}
	t.Setenv("EXECUTOR_MAX_UNACKED_TOTAL_BYTES", "-1")
	for _, args := range [][]string{
		{"serve"},
		{"remote", "--registry", "http://127.0.0.1:1", "--environment-id", "e"},
	} {
		var stderr bytes.Buffer
		if code := run(args, strings.NewReader(""), io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), "--max-unacked-total-bytes") {
			t.Errorf("%q with EXECUTOR_MAX_UNACKED_TOTAL_BYTES=-1: exit %d, stderr %q; want 2 naming the flag", args, code, stderr.String())
		}
	}
}
