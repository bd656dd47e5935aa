package harness_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

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

// TestLocal_WriteBlockCutMidMessage cuts the connection in the middle of a 1 MiB
// fs/writeBlock request, after most of it has reached the server (which decodes a chunk
// while its request arrives): on both servers the block is not written at all, the
// block before it is intact, and the server goes on serving new connections.
func TestLocal_WriteBlockCutMidMessage(t *testing.T) {
	block := make([]byte, 1<<20)
	rand.NewChaCha8([32]byte{'c'}).Read(block)
	forEachServer(t, func(t *testing.T, url string) {
		ctx := testCtx(t)
		path := filepath.Join(t.TempDir(), "cut.bin")
		ws, _, err := websocket.Dial(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.CloseNow()
		ws.SetReadLimit(-1)
		call := func(msg string) {
			t.Helper()
			if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(msg, `{"method"`) { // a request: wait for its reply
				_, b, err := ws.Read(ctx)
				if err != nil || !bytes.Contains(b, []byte(`"result"`)) {
					t.Fatalf("reply to %.60s…: %s, %v", msg, b, err)
				}
			}
		}
		call(`{"id":1,"method":"initialize","params":{"clientName":"cut-test"}}`)
		call(`{"method":"initialized","params":{}}`)
		pathJSON, _ := json.Marshal(protocol.FromNative(path))
		call(`{"id":2,"method":"fs/open","params":{"handleId":"w","path":` + string(pathJSON) + `,"mode":"replace"}}`)
		chunk := base64.StdEncoding.EncodeToString(block)
		call(`{"id":3,"method":"fs/writeBlock","params":{"handleId":"w","offset":0,"chunk":"` + chunk + `"}}`)

		// The second block's request, all but its last 300 KB, then the cut.
		second := []byte(`{"id":4,"method":"fs/writeBlock","params":{"handleId":"w","offset":1048576,"chunk":"` + chunk + `"}}`)
		w, err := ws.Writer(ctx, websocket.MessageText)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(second[:len(second)-300_000]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // the server reads (and decodes) what was sent
		ws.CloseNow()

		c, _ := dial(t, url, true) // the server still serves
		var meta protocol.FsGetMetadataResult
		if err := c.Call(ctx, protocol.MethodFsGetMetadata, map[string]any{"path": protocol.FromNative(path)}, &meta); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, block) {
			t.Fatalf("after the cut the file has %d bytes (equal to the first block: %v), want exactly the first block", len(got), len(got) == len(block) && bytes.Equal(got, block))
		}
	})
}
