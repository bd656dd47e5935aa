package harness_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
	"github.com/execlab/executor/jsonwire"
)

// The extension helpers (docs/protocol-extensions.md) against ours, which advertises
// them, and against every released reference, which does not: there every helper fails
// with ErrNotSupported without sending anything, ptySize is dropped (24×80), and the
// released executor still answers -32601 when the methods are called directly.
func TestExtensions_PerServer(t *testing.T) {
	forEachServer(t, func(t *testing.T, url string) {
		ours := !strings.HasPrefix(t.Name(), "TestExtensions_PerServer/0.")
		c, _ := dial(t, url, true)
		ctx := testCtx(t)
		caps := c.Capabilities()
		if got := caps.ProcessCloseStdin && caps.ProcessResizePty && caps.ProcessStartPtySize && caps.ProcessSendSignal && caps.ProcessExitStatus; got != ours {
			t.Fatalf("capabilities %+v: extensions advertised = %v, want %v", caps, got, ours)
		}

		// pipes: closeStdin gives the child EOF.
		if _, err := c.StartProcess(ctx, protocol.ProcessStartParams{
			ProcessID: "cat", Argv: []string{"cat"}, Cwd: protocol.FromNative("/"),
			Env: map[string]string{"PATH": "/usr/bin:/bin"}, PipeStdin: true,
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WriteProcess(ctx, "cat", "w1", []byte("hi\n")); err != nil {
			t.Fatal(err)
		}
		st, err := c.CloseStdin(ctx, "cat")
		if !ours && !errors.Is(err, harness.ErrNotSupported) {
			t.Fatalf("CloseStdin = %q, %v; want ErrNotSupported", st, err)
		}
		if ours && (err != nil || st != protocol.CloseStdinClosed) {
			t.Fatalf("CloseStdin = %q, %v; want closed", st, err)
		}
		// Without closeStdin cat never ends: terminate it once it has echoed.
		terminated := false
		ev := collect(t, ctx, c, "cat", func(out string) {
			if !ours && !terminated && out == "hi\n" {
				terminated = true
				if _, err := c.TerminateProcess(ctx, "cat"); err != nil {
					t.Error(err)
				}
			}
		})
		if ev.output[protocol.StreamStdout] != "hi\n" {
			t.Errorf("cat stdout = %q, want %q", ev.output[protocol.StreamStdout], "hi\n")
		}
		if ours && ev.exitCode != 0 {
			t.Errorf("cat exit = %d, want 0 (EOF)", ev.exitCode)
		}

		// PTY: ptySize at start, resize with SIGWINCH.
		if _, err := c.StartProcess(ctx, protocol.ProcessStartParams{
			ProcessID: "tty", Argv: []string{"sh", "-c", `trap 'echo "winch $(stty size)"; exit 0' WINCH; echo "size $(stty size)"; i=0; while [ $i -lt 100 ]; do sleep 0.02; i=$((i+1)); done; echo timeout`},
			Cwd: protocol.FromNative("/"), Env: map[string]string{"PATH": "/usr/bin:/bin"}, Tty: true,
			PtySize: &protocol.PtySize{Rows: 40, Cols: 100},
		}); err != nil {
			t.Fatal(err)
		}
		var resized bool
		ev = collect(t, ctx, c, "tty", func(out string) {
			if !resized && strings.Contains(out, "size ") {
				resized = true
				st, err := c.ResizePty(ctx, "tty", protocol.PtySize{Rows: 41, Cols: 101})
				if ours && (err != nil || st != protocol.ResizeResized) {
					t.Errorf("ResizePty = %q, %v; want resized", st, err)
				}
				if !ours && !errors.Is(err, harness.ErrNotSupported) {
					t.Errorf("ResizePty = %q, %v; want ErrNotSupported", st, err)
				}
			}
		})
		out := ev.output[protocol.StreamPty]
		wantSize, wantAfter := "size 40 100", "winch 41 101"
		if !ours {
			wantSize, wantAfter = "size 24 80", "timeout"
		}
		if !strings.Contains(out, wantSize) || !strings.Contains(out, wantAfter) {
			t.Errorf("pty output = %q, want %q and %q", out, wantSize, wantAfter)
		}

		err = c.SendSignal(ctx, "tty", protocol.SignalTERM)
		if ours && err != nil || !ours && !errors.Is(err, harness.ErrNotSupported) {
			t.Errorf("SendSignal = %v, want nil for ours, ErrNotSupported otherwise", err)
		}

		// The exit status names the signal the PTY's wire exit code (1) hides.
		xs, err := c.ExitStatus(ctx, "cat")
		switch {
		case ours && (err != nil || xs.Status != protocol.ExitStatusExited || xs.ExitCode == nil || *xs.ExitCode != 0 || xs.Signal != nil):
			t.Errorf("ExitStatus(cat) = %+v, %v; want exited 0 without a signal", xs, err)
		case !ours && !errors.Is(err, harness.ErrNotSupported):
			t.Errorf("ExitStatus = %+v, %v; want ErrNotSupported", xs, err)
		}

		// A released executor really does not have the methods.
		if !ours {
			for _, m := range []string{protocol.MethodProcessCloseStdin, protocol.MethodProcessResizePty, protocol.MethodProcessSendSignal, protocol.MethodProcessExitStatus} {
				var re *harness.RPCError
				if err := c.Call(ctx, m, map[string]any{"processId": "tty"}, nil); !errors.As(err, &re) || re.Code != jsonwire.CodeMethodNotFound {
					t.Errorf("%s on the reference = %v, want -32601", m, err)
				}
			}
		}
	})
}

func TestExtensions_NotInitialized(t *testing.T) {
	c, _ := dial(t, startServer(t, servers[0]), false)
	if _, err := c.CloseStdin(testCtx(t), "p"); !errors.Is(err, harness.ErrNotSupported) {
		t.Fatalf("CloseStdin before Initialize = %v, want ErrNotSupported", err)
	}
}
