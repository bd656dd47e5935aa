package jsonrpc_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain stops the shared reference servers (refserver_test.go) and then applies the
// goroutine-leak gate.
func TestMain(m *testing.M) {
	code := m.Run()
	stopReferences()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
