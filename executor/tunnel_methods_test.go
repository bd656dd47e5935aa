package executor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/executor/tunnel"
)

// Port tunnels through the JSON-RPC layer (docs/protocol-extensions.md, tcpTunnel).

func TestTunnel_AdvertisedUnlessNone(t *testing.T) {
	none, _ := tunnel.ParsePolicy([]string{"none"})
	for _, tt := range []struct {
		policy *tunnel.Policy
		want   any
	}{{nil, true}, {none, nil}} {
		c := newHarness(t, &executor.Options{TunnelPolicy: tt.policy}).dial()
		caps := c.Handshake("")["environmentInfo"].(map[string]any)["capabilities"].(map[string]any)
		if caps["tcpTunnel"] != tt.want {
			t.Errorf("policy %v: tcpTunnel = %v, want %v", tt.policy, caps["tcpTunnel"], tt.want)
		}
	}
}

func TestTunnel_OpenRefusedNamesFlag(t *testing.T) {
	c := newHarness(t, nil).dial()
	c.Handshake("")
	resp, _ := c.Call(5, "tunnel/open", map[string]any{"connId": 1, "host": "192.0.2.1", "port": 80, "window": 0})
	res := resp["result"].(map[string]any)
	if res["status"] != "refused" {
		t.Fatalf("got %v, want status refused", resp)
	}
	resp, _ = c.Call(6, "tunnel/open", map[string]any{"connId": 1, "host": "h"})
	if code, msg := errMessage(resp); code != -32602 || msg != "missing field `port`" {
		t.Fatalf("got %v %q, want -32602 missing field `port`", code, msg)
	}
}

// After initialize, notifications for ids that are not open are ignored; before it, a
// tunnel notification closes the connection as every unexpected notification does.
func TestTunnel_NotificationsBeforeAndAfterInitialize(t *testing.T) {
	h := newHarness(t, nil)
	c := h.dial()
	c.Handshake("")
	c.Send(map[string]any{"method": "tunnel/data", "params": map[string]any{"connId": 9, "data": "aGk="}})
	c.Send(map[string]any{"method": "tunnel/close", "params": map[string]any{"connId": 9}})
	if resp, _ := c.Call(7, "environment/status", nil); resp["result"] == nil {
		t.Fatalf("connection unusable after tunnel notifications for unknown ids: %v", resp)
	}
	early := h.dial()
	early.Send(map[string]any{"method": "tunnel/data", "params": map[string]any{"connId": 1, "data": ""}})
	if _, err := early.TryRecv(5 * time.Second); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("tunnel/data before initialize: %v, want the connection closed", err)
	}
}
