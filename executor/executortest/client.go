package executortest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// Client is a raw JSON-RPC test client over one End. It is not safe for concurrent use.
type Client struct {
	tb  testing.TB
	end *End
}

// NewClient wraps end.
func NewClient(tb testing.TB, end *End) *Client { return &Client{tb: tb, end: end} }

// Send writes a message given as a JSON-marshalable value or a raw string.
func (c *Client) Send(v any) {
	c.tb.Helper()
	var b []byte
	switch x := v.(type) {
	case string:
		b = []byte(x)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			c.tb.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.end.WriteMessage(ctx, b); err != nil {
		c.tb.Fatalf("sending %s: %v", b, err)
	}
}

// Recv returns the next message decoded as a map, failing the test after 5 s.
func (c *Client) Recv() map[string]any {
	c.tb.Helper()
	m, err := c.TryRecv(5 * time.Second)
	if err != nil {
		c.tb.Fatalf("receiving: %v", err)
	}
	return m
}

// TryRecv returns the next message or an error after d.
func (c *Client) TryRecv(d time.Duration) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	b, err := c.end.ReadMessage(ctx)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("server sent invalid JSON %q: %w", b, err)
	}
	return m, nil
}

// Call sends a request and returns the response with that id, collecting any
// notifications that arrive first into the returned slice.
func (c *Client) Call(id int, method string, params any) (resp map[string]any, notes []map[string]any) {
	c.tb.Helper()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	c.Send(msg)
	for {
		m := c.Recv()
		if _, ok := m["method"]; ok {
			notes = append(notes, m)
			continue
		}
		if got, _ := m["id"].(float64); int(got) != id {
			c.tb.Fatalf("got response %v, want id %d", m, id)
		}
		return m, notes
	}
}

// Handshake runs initialize (with an optional resume id) and initialized, returning the
// initialize result.
func (c *Client) Handshake(resume string) map[string]any {
	c.tb.Helper()
	params := map[string]any{"clientName": "executortest"}
	if resume != "" {
		params["resumeSessionId"] = resume
	}
	resp, _ := c.Call(0, "initialize", params)
	res, ok := resp["result"].(map[string]any)
	if !ok {
		c.tb.Fatalf("initialize failed: %v", resp)
	}
	c.Send(map[string]any{"method": "initialized", "params": map[string]any{}})
	return res
}

// Close closes the client's end.
func (c *Client) Close() { c.end.Close() }
