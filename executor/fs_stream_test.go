package executor_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/execlab/executor/executor/protocol"
)

// TestFsWatchMissing_NotifiesAndTearsDownOnDisconnect drives fs/watchMissing through the
// JSON-RPC layer: the capability is advertised, the notification arrives on the
// connection's write path, and a connection closed with an armed set leaves no
// goroutine behind (the package's goleak gate) and no watch (a path created afterwards
// reaches nobody; a new connection starts its own generations at 1).
func TestFsWatchMissing_NotifiesAndTearsDownOnDisconnect(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, nil)
	c := h.dial()
	caps := initCaps(c.Handshake(""))
	if caps["fsWatchMissing"] != true || caps["fileWriteStreaming"] != true {
		t.Fatalf("capabilities %v, want fsWatchMissing and fileWriteStreaming true", caps)
	}
	a := protocol.FromNative(filepath.Join(dir, "a"))
	resp, _ := c.Call(1, "fs/watchMissing", map[string]any{"watchId": 1, "missing": []any{a}})
	if resp["result"].(map[string]any)["watching"] != true {
		t.Fatalf("watchMissing: %v", resp)
	}
	os.WriteFile(filepath.Join(dir, "a"), nil, 0o644)
	n, err := c.TryRecv(2 * time.Second)
	if err != nil || n["method"] != "fs/missingChanged" || n["params"].(map[string]any)["watchId"] != float64(1) {
		t.Fatalf("got %v, %v; want fs/missingChanged for watch 1", n, err)
	}

	b := protocol.FromNative(filepath.Join(dir, "b", "c"))
	resp, _ = c.Call(2, "fs/watchMissing", map[string]any{"watchId": 2, "missing": []any{b}})
	if resp["result"].(map[string]any)["watching"] != true {
		t.Fatalf("watchMissing: %v", resp)
	}
	c.Close() // armed set torn down with the connection

	c2 := h.dial()
	c2.Handshake("")
	resp, _ = c2.Call(1, "fs/watchMissing", map[string]any{"watchId": 1, "missing": []any{b}})
	if resp["result"].(map[string]any)["watching"] != true {
		t.Fatalf("a new connection's first watch: %v", resp)
	}
}
