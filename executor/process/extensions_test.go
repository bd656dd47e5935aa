package process_test

import (
	"context"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// Tests of the protocol extensions (docs/protocol-extensions.md): process/closeStdin,
// process/resizePty, process/start ptySize, process/sendSignal.

func ptyParams(id string, cwd protocol.PathURI, argv ...string) *protocol.ProcessStartParams {
	p := startParams(id, cwd, argv...)
	p.Tty = true
	return p
}

func closeStdin(t *testing.T, m interface {
	CloseStdin(context.Context, *protocol.ProcessCloseStdinParams) (*protocol.ProcessCloseStdinResult, error)
}, id string) protocol.CloseStdinStatus {
	t.Helper()
	res, err := m.CloseStdin(context.Background(), &protocol.ProcessCloseStdinParams{ProcessID: id})
	if err != nil {
		t.Fatalf("CloseStdin(%s): %v", id, err)
	}
	return res.Status
}

func TestCloseStdin_PipeChildSeesEOFAfterQueuedWrites(t *testing.T) {
	m := newManager(t, nil)
	p := startParams("cat", tmpURI(t), "cat")
	p.PipeStdin = true
	mustStart(t, m, p)
	for i, chunk := range []string{"hello ", "world\n"} {
		res, err := m.Write(context.Background(), &protocol.ProcessWriteParams{ProcessID: "cat", WriteID: string(rune('a' + i)), Chunk: []byte(chunk)})
		if err != nil || res.Status != protocol.WriteAccepted {
			t.Fatalf("Write = %v, %v; want accepted", res, err)
		}
	}
	if got := closeStdin(t, m, "cat"); got != protocol.CloseStdinClosed {
		t.Fatalf("CloseStdin = %q, want closed", got)
	}
	if got := closeStdin(t, m, "cat"); got != protocol.CloseStdinClosed {
		t.Fatalf("repeated CloseStdin = %q, want closed", got)
	}
	res, err := m.Write(context.Background(), &protocol.ProcessWriteParams{ProcessID: "cat", WriteID: "late", Chunk: []byte("x")})
	if err != nil || res.Status != protocol.WriteStdinClosed {
		t.Fatalf("Write after CloseStdin = %v, %v; want stdinClosed", res, err)
	}
	out, fin := readUntilClosed(t, m, "cat")
	if got := string(out[protocol.StreamStdout]); got != "hello world\n" {
		t.Fatalf("stdout = %q, want %q", got, "hello world\n")
	}
	if fin.ExitCode == nil || *fin.ExitCode != 0 {
		t.Fatalf("exit = %v, want 0", fin.ExitCode)
	}
}

func TestCloseStdin_Statuses(t *testing.T) {
	m := newManager(t, nil)
	mustStart(t, m, startParams("nostdin", tmpURI(t), "sleep", "5"))
	tests := []struct {
		id   string
		want protocol.CloseStdinStatus
	}{
		{"missing", protocol.CloseStdinUnknownProcess},
		{"nostdin", protocol.CloseStdinNoStdin},
	}
	for _, tt := range tests {
		if got := closeStdin(t, m, tt.id); got != tt.want {
			t.Errorf("CloseStdin(%s) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

func TestCloseStdin_PtySendsVEOF(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		// cat at the start of a line: one VEOF ends it.
		{"after newline", "line\n", "line"},
		// a partial line: the first VEOF flushes it, the second is EOF.
		{"partial line", "partial", "partial"},
		{"nothing written", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t, nil)
			mustStart(t, m, ptyParams("p", tmpURI(t), "sh", "-c", "stty -echo; echo ready; cat; echo CAT-ENDED"))
			waitOutput(t, m, "p", "ready")
			if tt.input != "" {
				if _, err := m.Write(context.Background(), &protocol.ProcessWriteParams{ProcessID: "p", WriteID: "w", Chunk: []byte(tt.input)}); err != nil {
					t.Fatal(err)
				}
			}
			if got := closeStdin(t, m, "p"); got != protocol.CloseStdinClosed {
				t.Fatalf("CloseStdin = %q, want closed", got)
			}
			out, fin := readUntilClosed(t, m, "p")
			s := string(out[protocol.StreamPty])
			if !strings.Contains(s, tt.want+"CAT-ENDED") && !strings.Contains(s, tt.want+"\r\nCAT-ENDED") {
				t.Fatalf("pty output = %q, want %q then CAT-ENDED", s, tt.want)
			}
			if fin.ExitCode == nil || *fin.ExitCode != 0 {
				t.Fatalf("exit = %v, want 0", fin.ExitCode)
			}
		})
	}
}

func TestStart_PtySize(t *testing.T) {
	tests := []struct {
		name string
		size *protocol.PtySize
		want string
	}{
		{"default", nil, "24 80"},
		{"given", &protocol.PtySize{Rows: 50, Cols: 132}, "50 132"},
		{"pixels", &protocol.PtySize{Rows: 10, Cols: 20, PixelWidth: 200, PixelHeight: 300}, "10 20"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newManager(t, nil)
			p := ptyParams("p", tmpURI(t), "stty", "size")
			p.PtySize = tt.size
			mustStart(t, m, p)
			out, _ := readUntilClosed(t, m, "p")
			if got := strings.TrimSpace(string(out[protocol.StreamPty])); got != tt.want {
				t.Fatalf("stty size = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStart_PtySizeValidated(t *testing.T) {
	m := newManager(t, nil)
	p := ptyParams("p", tmpURI(t), "true")
	p.PtySize = &protocol.PtySize{Rows: 0, Cols: 80}
	_, err := m.Start(context.Background(), p)
	wantRPCError(t, err, jsonwire.CodeInvalidParams, "pty size rows and cols must be at least 1")
}

// TestResizePty_SIGWINCHReachesForeground: TIOCSWINSZ on the master changes what the
// child sees and the kernel delivers SIGWINCH to the foreground group.
func TestResizePty_SIGWINCHReachesForeground(t *testing.T) {
	m := newManager(t, nil)
	mustStart(t, m, ptyParams("p", tmpURI(t), "sh", "-c",
		`trap 'echo "WINCH $(stty size)"; exit 0' WINCH; echo ready; while :; do sleep 0.05; done`))
	waitOutput(t, m, "p", "ready")
	res, err := m.ResizePty(context.Background(), &protocol.ProcessResizePtyParams{ProcessID: "p", Size: protocol.PtySize{Rows: 33, Cols: 101}})
	if err != nil || res.Status != protocol.ResizeResized {
		t.Fatalf("ResizePty = %v, %v; want resized", res, err)
	}
	out, _ := readUntilClosed(t, m, "p")
	if got := string(out[protocol.StreamPty]); !strings.Contains(got, "WINCH 33 101") {
		t.Fatalf("pty output = %q, want WINCH 33 101", got)
	}
	res, err = m.ResizePty(context.Background(), &protocol.ProcessResizePtyParams{ProcessID: "p", Size: protocol.PtySize{Rows: 1, Cols: 1}})
	if err != nil || res.Status != protocol.ResizeExited {
		t.Fatalf("ResizePty after exit = %v, %v; want exited", res, err)
	}
}

func TestResizePty_Statuses(t *testing.T) {
	m := newManager(t, nil)
	mustStart(t, m, startParams("pipes", tmpURI(t), "sleep", "5"))
	size := protocol.PtySize{Rows: 10, Cols: 10}
	for _, tt := range []struct {
		id   string
		want protocol.ResizeStatus
	}{
		{"missing", protocol.ResizeUnknownProcess},
		{"pipes", protocol.ResizeNotPty},
	} {
		res, err := m.ResizePty(context.Background(), &protocol.ProcessResizePtyParams{ProcessID: tt.id, Size: size})
		if err != nil || res.Status != tt.want {
			t.Errorf("ResizePty(%s) = %v, %v; want %q", tt.id, res, err, tt.want)
		}
	}
	_, err := m.ResizePty(context.Background(), &protocol.ProcessResizePtyParams{ProcessID: "pipes", Size: protocol.PtySize{Rows: 10}})
	wantRPCError(t, err, jsonwire.CodeInvalidParams, "pty size rows and cols must be at least 1")
}

func TestSendSignal_ExitCodes(t *testing.T) {
	tests := []struct {
		sig  protocol.PosixSignal
		tty  bool
		want int32
	}{
		{protocol.SignalTERM, false, 143},
		{protocol.SignalHUP, false, 129},
		{protocol.SignalQUIT, false, 131},
		{protocol.SignalKILL, false, 137},
		{protocol.SignalINT, false, 130},
		{protocol.SignalTERM, true, 1}, // PTY signal deaths report 1 (spec/jsonrpc.md §5.4)
	}
	for _, tt := range tests {
		t.Run(string(tt.sig), func(t *testing.T) {
			m := newManager(t, nil)
			p := startParams("p", tmpURI(t), "sh", "-c", "echo ready; exec sleep 30")
			p.Tty = tt.tty
			mustStart(t, m, p)
			waitOutput(t, m, "p", "ready")
			if _, err := m.SendSignal(context.Background(), &protocol.ProcessSendSignalParams{ProcessID: "p", Signal: tt.sig}); err != nil {
				t.Fatal(err)
			}
			_, fin := readUntilClosed(t, m, "p")
			if fin.ExitCode == nil || *fin.ExitCode != tt.want {
				t.Fatalf("exit code = %v, want %d", fin.ExitCode, tt.want)
			}
		})
	}
	m := newManager(t, nil)
	if _, err := m.SendSignal(context.Background(), &protocol.ProcessSendSignalParams{ProcessID: "missing", Signal: protocol.SignalTERM}); err != nil {
		t.Fatalf("SendSignal(unknown) = %v, want {}", err)
	}
}
