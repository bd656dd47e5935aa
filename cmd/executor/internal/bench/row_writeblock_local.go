package bench

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/execlab/executor/executor/protocol"
)

// writeblock_local: fs/open with mode "replace", then sequential fs/writeBlock of
// writeBlockLen (1 MiB) blocks from offset 0 until writeBlockFileBytes (256 MiB; 16 MiB
// with --quick) are written, one request at a time, then fs/close, over a local
// WebSocket. MiB/s from fs/open to the fs/close response. The blocks cycle through
// writeBlockDistinct seeded pseudo-random blocks, sent with the harness's
// harness.Client.WriteBlock (no encoding/json; the client spends the same on both sides);
// afterwards the file's size and SHA-256 must match what was sent. Goal: ≥ 2× the
// reference.

// writeBlocks are the run's distinct blocks and the SHA-256 of the whole stream they
// make.
type writeBlocks struct {
	size  int64
	raw   [][]byte
	sum   [sha256.Size]byte
	tmpFS string // directory for the written files, removed when Run returns
}

// writeBlocksFor returns the run's blocks, creating them on first use.
func (e *Env) writeBlocksFor() (*writeBlocks, error) {
	if e.writeBlocks != nil {
		return e.writeBlocks, nil
	}
	size := quick(e, int64(writeBlockFileBytes), writeBlockFileBytesQuick)
	dir, err := os.MkdirTemp("/var/tmp", "executor-bench-writeblock-")
	if err != nil {
		return nil, fmt.Errorf("creating writeblock directory: %w", err)
	}
	e.onClose(func() { os.RemoveAll(dir) })
	wb := &writeBlocks{size: size, tmpFS: dir}
	rng := rand.NewChaCha8([32]byte{'w', 'b'})
	raw := make([][]byte, writeBlockDistinct)
	for i := range raw {
		raw[i] = make([]byte, writeBlockLen)
		if _, err := io.ReadFull(rng, raw[i]); err != nil {
			return nil, err
		}
	}
	h := sha256.New()
	for off := int64(0); off < size; off += writeBlockLen {
		h.Write(raw[(off/writeBlockLen)%writeBlockDistinct])
	}
	h.Sum(wb.sum[:0])
	wb.raw = raw
	e.writeBlocks = wb
	return wb, nil
}

func measureWriteBlockLocal(ctx context.Context, e *Env, side *Side) (float64, error) {
	wb, sess, err := withShared(ctx, side, e.writeBlocksFor)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, streamTimeout)
	defer cancel()
	handle := side.processID("wb") // unique per side, ≤ 32 bytes
	path := filepath.Join(wb.tmpFS, handle)
	defer os.Remove(path)
	elapsed, err := sess.timeHandle(ctx, handle, map[string]any{"handleId": handle, "path": protocol.FromNative(path), "mode": "replace"}, func() error {
		for off := int64(0); off < wb.size; off += writeBlockLen {
			if err := sess.writeBlock(ctx, handle, uint64(off), wb.raw[(off/writeBlockLen)%writeBlockDistinct]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("%w: reading the written file: %v", errDataLoss, err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil || n != wb.size {
		return 0, fmt.Errorf("%w: the written file has %d of %d bytes (%v)", errDataLoss, n, wb.size, err)
	}
	var sum [sha256.Size]byte
	if h.Sum(sum[:0]); sum != wb.sum {
		return 0, fmt.Errorf("%w: SHA-256 of the written file differs from the blocks sent", errDataLoss)
	}
	return float64(wb.size) / mebibyte / elapsed.Seconds(), nil
}
