package bench

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/execlab/executor/executor/protocol"
)

// readblock_local: fs/open, then fs/readBlock of readBlockLen (1 MiB) blocks from offset 0
// to the end of a 1 GiB file (32 MiB with --quick), one request at a time, then fs/close,
// over a local WebSocket. MiB/s from fs/open to the fs/close response. The received bytes
// are hashed and compared with the file's SHA-256, and the read past the end must return
// no bytes with eof. Goal: ≥ 2× the reference.

// blockFile is the random file readblock_local reads, created once per Run under /var/tmp
// (the page cache keeps it hot for both sides).
type blockFile struct {
	path string
	size int64
	sum  [sha256.Size]byte
}

// blockFileFor returns the run's file, creating it on first use.
func (e *Env) blockFileFor() (*blockFile, error) {
	if e.blockFile != nil {
		return e.blockFile, nil
	}
	size := quick(e, int64(readBlockFileBytes), readBlockFileBytesQuick)
	dir, err := os.MkdirTemp("/var/tmp", "executor-bench-blocks-")
	if err != nil {
		return nil, fmt.Errorf("creating readblock file: %w", err)
	}
	f := &blockFile{path: filepath.Join(dir, "data"), size: size}
	if err := f.write(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("creating readblock file: %w", err)
	}
	e.blockFile = f
	e.onClose(func() { os.RemoveAll(dir) })
	return f, nil
}

// write fills the file with seeded pseudo-random bytes and records their SHA-256.
func (f *blockFile) write() error {
	out, err := os.Create(f.path)
	if err != nil {
		return err
	}
	h := sha256.New()
	w := bufio.NewWriterSize(io.MultiWriter(out, h), 1<<20)
	if _, err := io.CopyN(w, rand.NewChaCha8([32]byte{'r', 'b'}), f.size); err != nil {
		out.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		out.Close()
		return err
	}
	h.Sum(f.sum[:0])
	return out.Close()
}

func measureReadBlockLocal(ctx context.Context, e *Env, side *Side) (float64, error) {
	f, sess, err := withShared(ctx, side, e.blockFileFor)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, streamTimeout)
	defer cancel()
	handle := side.processID("rb") // unique per side, ≤ 32 bytes
	h := sha256.New()
	var (
		got int64
		res readBlockResult // its chunk buffer is reused block after block
	)
	elapsed, err := sess.timeHandle(ctx, handle, protocol.FsOpenParams{HandleID: handle, Path: protocol.FromNative(f.path)}, func() error {
		for {
			res.Eof, res.Chunk.buf = false, res.Chunk.buf[:0] // a missing member must not leave the last block
			if err := sess.call(ctx, protocol.MethodFsReadBlock, protocol.FsReadBlockParams{HandleID: handle, Offset: uint64(got), Len: readBlockLen}, &res); err != nil {
				return err
			}
			n := len(res.Chunk.buf)
			h.Write(res.Chunk.buf)
			got += int64(n)
			if wantEOF := n < readBlockLen; res.Eof != wantEOF || n > readBlockLen {
				return fmt.Errorf("%w: block at %d has %d bytes and eof %v", errDataLoss, got-int64(n), n, res.Eof)
			}
			if res.Eof || got > f.size {
				return nil
			}
		}
	})
	if err != nil {
		return 0, err
	}
	if got != f.size {
		return 0, fmt.Errorf("%w: read %d of %d bytes", errDataLoss, got, f.size)
	}
	var sum [sha256.Size]byte
	if h.Sum(sum[:0]); sum != f.sum {
		return 0, fmt.Errorf("%w: SHA-256 of the %d bytes read differs from the file's", errDataLoss, got)
	}
	return float64(f.size) / mebibyte / elapsed.Seconds(), nil
}
