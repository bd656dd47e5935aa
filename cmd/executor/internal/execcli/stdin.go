package execcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
)

var (
	errCanceled = errors.New("execcli: stdin read canceled")
	errEOF      = io.EOF
)

// startStdin starts the stdin pump, owned by wg. For an *os.File the pending read is
// cancelled when ctx ends (Linux), so wg.Wait does not wait for the user to type.
func (r *runner) startStdin(ctx context.Context, wg *sync.WaitGroup) error {
	src := r.cfg.Stdin
	if src == nil {
		return nil
	}
	var cr *cancelableReader
	if f, ok := src.(*os.File); ok {
		var err error
		if cr, err = newCancelableReader(f); err != nil {
			return fmt.Errorf("reading stdin: %w", err)
		}
		src = cr
	}
	run := func() {
		defer r.term.restoreOnPanic()
		r.pumpStdin(ctx, src)
	}
	if cr == nil || stdinCancelable {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if cr != nil {
				defer cr.Close()
			}
			run()
		}()
		if cr != nil {
			wg.Add(1)
			go func() { // ends the pending read once the command is over
				defer wg.Done()
				<-ctx.Done()
				cr.Cancel()
			}()
		}
		return nil
	}
	go run() // not cancelable here: ends with the process (see stdinCancelable)
	return nil
}

// pumpStdin forwards stdin as process/write calls, one writeId per chunk, and forwards
// its end (sendEOF).
func (r *runner) pumpStdin(ctx context.Context, src io.Reader) {
	buf := make([]byte, stdinChunk)
	var last byte
	wrote := false
	for n := 0; ; n++ {
		k, err := src.Read(buf)
		if k > 0 {
			chunk := append([]byte(nil), buf[:k]...)
			st, werr := r.c.WriteProcess(ctx, r.pid, fmt.Sprintf("stdin-%d", n), chunk)
			if werr != nil || st == protocol.WriteStdinClosed {
				return
			}
			last, wrote = chunk[k-1], true
		}
		switch {
		case err == nil && ctx.Err() == nil:
			continue
		case errors.Is(err, errCanceled) || ctx.Err() != nil:
			return
		}
		// EOF, or a read error (EIO after a terminal hangup): the input has ended.
		r.sendEOF(ctx, last, wrote)
		return
	}
}

// sendEOF tells the remote command that stdin ended: process/closeStdin when the
// executor has it; with a PTY otherwise the EOF character itself (twice after a partial
// line: the first flushes it); with pipes otherwise nothing can be done, and the user is
// told how to end the command.
func (r *runner) sendEOF(ctx context.Context, last byte, wrote bool) {
	if r.caps.ProcessCloseStdin {
		_, err := r.c.CloseStdin(ctx, r.pid)
		if err == nil || ctx.Err() != nil {
			return
		}
		if !errors.Is(err, harness.ErrNotSupported) {
			r.out.printf("executor exec: closing remote stdin: %v\n", err)
			return
		}
	}
	if r.tty {
		b := []byte{veof}
		if wrote && last != '\n' && last != '\r' && last != veof {
			b = []byte{veof, veof}
		}
		_, _ = r.c.WriteProcess(ctx, r.pid, "stdin-eof", b)
		return
	}
	r.out.once("eof", "executor exec: stdin EOF not supported by this executor; the remote command's stdin stays open. End it with Ctrl-C (or kill -INT/-TERM this process).\n")
}
