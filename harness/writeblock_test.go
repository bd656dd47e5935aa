package harness_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/harness"
)

// TestLocal_WriteBlock writes a file through the fs/writeBlock fast path on both servers
// (three 1 MiB blocks, the last one short, one rewritten out of order) and checks the
// bytes; a block for an unknown handle fails as an RPC error.
func TestLocal_WriteBlock(t *testing.T) {
	data := make([]byte, 3<<20-12345)
	rand.NewChaCha8([32]byte{'w'}).Read(data)
	forEachServer(t, func(t *testing.T, url string) {
		c, _ := dial(t, url, true)
		ctx := testCtx(t)
		path := filepath.Join(t.TempDir(), "out.bin")
		if err := c.Call(ctx, protocol.MethodFsOpen, map[string]any{"handleId": "wb-1", "path": protocol.FromNative(path), "mode": "replace"}, nil); err != nil {
			t.Fatal(err)
		}
		for _, off := range []int{1 << 20, 0, 2 << 20, 1 << 20} {
			if err := c.WriteBlock(ctx, "wb-1", uint64(off), data[off:min(off+1<<20, len(data))]); err != nil {
				t.Fatalf("writing at %d: %v", off, err)
			}
		}
		if err := c.Call(ctx, protocol.MethodFsClose, protocol.FsCloseParams{HandleID: "wb-1"}, nil); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("got %d bytes, want the %d written (equal: false)", len(got), len(data))
		}
		err = c.WriteBlock(ctx, "ghost", 0, []byte("x"))
		var re *harness.RPCError
		if !errors.As(err, &re) || re.Message == "" {
			t.Errorf("writing to an unknown handle: got %v, want an *RPCError", err)
		}
	})
}
