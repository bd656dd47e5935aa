package registrytest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execlab/executor/registry/server"
)

// openStore opens a fresh SQLite store in dir, closed at tb's cleanup.
func openStore(tb testing.TB, dir string) server.Store {
	tb.Helper()
	st, err := server.OpenStore(context.Background(), filepath.Join(dir, "registry.db"))
	if err != nil {
		tb.Fatalf("opening the registry store: %v", err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// writeTokens makes a random token, writes the token file (text, or the token's line when
// text is empty) into dir and parses it.
func writeTokens(tb testing.TB, dir, text string) (token, file string, tokens *server.Tokens) {
	tb.Helper()
	var b [16]byte
	_, _ = rand.Read(b[:])
	token = "tok_" + hex.EncodeToString(b[:])
	if text == "" {
		text = token + "\n"
	}
	file = filepath.Join(dir, "tokens")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		tb.Fatal(err)
	}
	tokens, err := server.ParseTokens(strings.NewReader(text))
	if err != nil {
		tb.Fatalf("parsing the tokens: %v", err)
	}
	return token, file, tokens
}
