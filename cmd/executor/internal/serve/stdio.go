package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/execlab/executor/executor"
)

// stdioConn is jsonrpc.MessageConn over newline-delimited JSON: blank lines are skipped,
// every outbound message is followed by "\n" and flushed.
type stdioConn struct {
	r *bufio.Reader
	// wmu serialises writes; WriteMessage is called from one goroutine but Close may race.
	wmu sync.Mutex
	w   *bufio.Writer

	closeOnce sync.Once
	closed    chan struct{}
	lines     chan lineOrErr // filled by the reader goroutine owned by serveStdio
}

type lineOrErr struct {
	b   []byte
	err error
}

var errStdinClosed = errors.New("stdin closed")

func (s *stdioConn) readLoop() {
	defer close(s.lines)
	for {
		line, err := readLine(s.r, MaxMessageBytes)
		if err != nil {
			select {
			case s.lines <- lineOrErr{err: err}:
			case <-s.closed:
			}
			return
		}
		if len(trimSpace(line)) == 0 {
			continue
		}
		select {
		case s.lines <- lineOrErr{b: line}:
		case <-s.closed:
			return
		}
	}
}

func (s *stdioConn) ReadMessage(ctx context.Context) ([]byte, error) {
	select {
	case l, ok := <-s.lines:
		if !ok {
			return nil, errStdinClosed
		}
		return l.b, l.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.closed:
		return nil, errStdinClosed
	}
}

func (s *stdioConn) WriteMessage(_ context.Context, msg []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := s.w.Write(msg); err != nil {
		return fmt.Errorf("writing stdout: %w", err)
	}
	if err := s.w.WriteByte('\n'); err != nil {
		return fmt.Errorf("writing stdout: %w", err)
	}
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("flushing stdout: %w", err)
	}
	return nil
}

func (s *stdioConn) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	return nil
}

// readLine reads one line without its terminator. A line over max bytes is consumed
// and replaced by a marker that fails to decode, so the client gets the usual malformed
// message error and the stream stays usable.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var buf []byte
	oversize := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !oversize && len(buf)+len(chunk) > max+1 {
			oversize, buf = true, nil
		}
		if !oversize {
			buf = append(buf, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && (err != io.EOF || (len(buf) == 0 && !oversize)) {
			return nil, err
		}
		if oversize {
			return []byte(oversizeMarker), nil
		}
		if n := len(buf); n > 0 && buf[n-1] == '\n' {
			buf = buf[:n-1]
		}
		return buf, nil
	}
}

// oversizeMarker stands in for a line over MaxMessageBytes.
const oversizeMarker = "message exceeds the size limit"

func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isSpace(b[i]) {
		i++
	}
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// serveStdio serves exactly one connection on in/out. Stdin EOF ends it and shuts the
// server down (the caller closes srv, killing every process).
func serveStdio(ctx context.Context, srv *executor.Server, in io.Reader, out io.Writer) error {
	sc := &stdioConn{
		r:      bufio.NewReaderSize(in, 64<<10),
		w:      bufio.NewWriterSize(out, 64<<10),
		closed: make(chan struct{}),
		lines:  make(chan lineOrErr),
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // reader goroutine; exits at EOF or when sc is closed
		defer wg.Done()
		sc.readLoop()
	}()
	err := srv.ServeConn(ctx, sc, executor.ConnInfo{Transport: executor.TransportStdio})
	_ = sc.Close()
	// The reader may be blocked in a read of stdin; it exits at EOF. Do not wait for it
	// when ctx ended first (stdin may never close).
	if ctx.Err() == nil {
		wg.Wait()
	}
	return err
}
