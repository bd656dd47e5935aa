package remote

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestStdinPump_EOFStopsTheRun: with --exit-on-stdin-close the pump drains what follows the
// start-up line and cancels the run with errStdinEOF at EOF (exit 0).
func TestStdinPump_EOFStopsTheRun(t *testing.T) {
	pr, pw := io.Pipe()
	in := openStdin(pr, true)
	defer in.close()
	wrote := make(chan error, 1)
	go func() { _, err := io.WriteString(pw, "tok\n"); wrote <- err }()
	if line, err := readLine(in.lines); err != nil || line != "tok\n" {
		t.Fatalf("readLine: got %q, %v", line, err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	startPump(in, nil, true, cancel)
	if _, err := io.WriteString(pw, "ignored\n"); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	<-runCtx.Done()
	if got := context.Cause(runCtx); !errors.Is(got, errStdinEOF) {
		t.Errorf("cause: got %v, want errStdinEOF", got)
	}
}

// TestStdinPump_CloseInterruptsABlockedRead: an interruptible stdin (here an io.Pipe) that
// never ends does not keep the pump alive: close interrupts the read and waits for the
// goroutine (goleak checks it is gone).
func TestStdinPump_CloseInterruptsABlockedRead(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	in := openStdin(pr, true)
	pumpAndClose(t, in)
	if in.pump.err == nil {
		t.Error("pump error: got nil, want the interrupted read's error")
	}
}

// pumpAndClose starts in's pump and closes in: close must return only once the pump
// goroutine has ended.
func pumpAndClose(t *testing.T, in *stdinReader) {
	t.Helper()
	_, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	startPump(in, nil, true, cancel)
	in.close()
	select {
	case <-in.pump.done:
	default:
		t.Fatal("close returned before the pump goroutine ended")
	}
}

// TestStdinReader_NotKept: without a pump stdin is only wrapped for the one-line credential;
// close is a no-op and nil stdin reads as empty.
func TestStdinReader_NotKept(t *testing.T) {
	in := openStdin(nil, false)
	if _, err := readLine(in.lines); err == nil {
		t.Error("readLine on nil stdin: got nil error, want ErrInvalidBearer")
	}
	in.close()
	in = openStdin(strings.NewReader("a\n"), false)
	if line, _ := readLine(in.lines); line != "a\n" {
		t.Errorf("readLine: got %q", line)
	}
	in.close()
}

// TestStdinOutcome: how the run ended maps to the command's result.
func TestStdinOutcome(t *testing.T) {
	errFrame := errors.New("bad frame")
	tests := []struct {
		name    string
		signal  bool  // ctx (the process lifetime) cancelled
		cause   error // runCtx cancelled by the pump with this; nil = not cancelled
		wantOK  bool
		wantNil bool
		wantErr error
	}{
		{name: "still running", wantOK: false},
		{name: "signal wins", signal: true, cause: errStdinEOF, wantOK: false},
		{name: "EOF", cause: errStdinEOF, wantOK: true, wantNil: true},
		{name: "rejected frame", cause: errFrame, wantOK: true, wantErr: errFrame},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			runCtx, cancel := context.WithCancelCause(ctx)
			defer cancel(nil)
			if tt.cause != nil {
				cancel(tt.cause)
			}
			if tt.signal {
				stop()
			}
			err, ok := stdinOutcome(ctx, runCtx)
			if ok != tt.wantOK {
				t.Fatalf("ok: got %v, want %v", ok, tt.wantOK)
			}
			if tt.wantNil && err != nil {
				t.Errorf("err: got %v, want nil", err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err: got %v, want %v", err, tt.wantErr)
			}
		})
	}
}
