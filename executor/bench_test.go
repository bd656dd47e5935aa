package executor_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/executor/executortest"
)

// BenchmarkStdoutThroughput streams a child's stdout through the server over an
// in-memory pipe and decodes every process/output chunk, verifying the byte count.
func BenchmarkStdoutThroughput(b *testing.B) {
	const size = 64 << 20
	a, c := benchServer(b)
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := "p" + string(rune('a'+i%26)) + string(rune('0'+i/26))
		c.Send(map[string]any{"id": 1, "method": "process/start", "params": startParams(id, "head", "-c", "67108864", "/dev/zero")})
		var got int
		for {
			raw, err := a.ReadMessage(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			var m struct {
				Method string `json:"method"`
				Params struct {
					Chunk string `json:"chunk"`
				} `json:"params"`
			}
			if err := json.Unmarshal(raw, &m); err != nil {
				b.Fatal(err)
			}
			if m.Method == "process/output" {
				got += base64.StdEncoding.DecodedLen(len(m.Params.Chunk)) - padding(m.Params.Chunk)
			}
			if m.Method == "process/closed" {
				break
			}
		}
		if got != size {
			b.Fatalf("got %d bytes, want %d", got, size)
		}
	}
}

// benchServer serves a fresh Server over an in-memory pipe until the benchmark ends and
// returns the client's end, handshaken.
func benchServer(b *testing.B) (*executortest.End, *executortest.Client) {
	srv := executor.NewServer(nil)
	a, e := executortest.Pipe()
	done := make(chan struct{})
	go func() { // serves e until the pipe closes
		defer close(done)
		_ = srv.ServeConn(context.Background(), e, executor.ConnInfo{Transport: executor.TransportStdio})
	}()
	b.Cleanup(func() { a.Close(); <-done; srv.Close() })
	c := executortest.NewClient(b, a)
	c.Handshake("")
	return a, c
}

func padding(s string) int {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '='; i-- {
		n++
	}
	return n
}

// BenchmarkFsWriteBlock sends 1 MiB fs/writeBlock requests through the server over an
// in-memory pipe, one at a time, into a replace handle.
func BenchmarkFsWriteBlock(b *testing.B) {
	const block = 1 << 20
	a, c := benchServer(b)
	path := b.TempDir() + "/f"
	if resp, _ := c.Call(1, "fs/open", map[string]any{"handleId": "w", "path": "file://" + path, "mode": "replace"}); resp["error"] != nil {
		b.Fatal(resp)
	}
	msg := []byte(`{"id":2,"method":"fs/writeBlock","params":{"handleId":"w","offset":0,"chunk":"` +
		base64.StdEncoding.EncodeToString(make([]byte, block)) + `"}}`)
	b.SetBytes(block)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := a.WriteMessage(context.Background(), msg); err != nil {
			b.Fatal(err)
		}
		if _, err := a.ReadMessage(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
