package executor_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/executor"
	"github.com/execlab/executor/executor/protocol"
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
		caps := initCaps(c.Handshake(""))
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

func TestTunnelListen_AdvertisedUnlessNone(t *testing.T) {
	none, _ := tunnel.ParseListenPolicy([]string{"none"})
	for _, tt := range []struct {
		policy *tunnel.Policy
		want   any
	}{{nil, true}, {none, nil}} {
		c := newHarness(t, &executor.Options{TunnelListenPolicy: tt.policy}).dial()
		caps := initCaps(c.Handshake(""))
		if caps["tcpTunnelListen"] != tt.want || caps["tcpTunnel"] != true {
			t.Errorf("listen policy %v: tcpTunnelListen = %v (tcpTunnel %v), want %v", tt.policy, caps["tcpTunnelListen"], caps["tcpTunnel"], tt.want)
		}
	}
}

// tunnel/listen through the JSON-RPC layer: a refusal names the flag; a listener's
// connection arrives as tunnel/accepted after the result, with an executor-chosen id
// that the data path serves; tunnel/unlisten stops it.
func TestTunnelListen_AcceptedAfterResult(t *testing.T) {
	c := newHarness(t, nil).dial()
	c.Handshake("")
	resp, _ := c.Call(5, "tunnel/listen", map[string]any{"listenerId": 1, "host": "0.0.0.0", "port": 0, "window": 0})
	if res := resp["result"].(map[string]any); res["status"] != "refused" || !strings.Contains(res["message"].(string), "--tunnel-listen-allow") {
		t.Fatalf("wildcard bind: %v, want refused naming --tunnel-listen-allow", resp)
	}
	resp, notes := c.Call(6, "tunnel/listen", map[string]any{"listenerId": 1, "host": "127.0.0.1", "port": 0, "window": 0})
	res := resp["result"].(map[string]any)
	if res["status"] != "listening" || len(notes) != 0 {
		t.Fatalf("listen: %v %v", resp, notes)
	}
	port := int(res["port"].(float64))
	nc, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := nc.Write([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	acc := c.Recv()
	p, _ := acc["params"].(map[string]any)
	if acc["method"] != "tunnel/accepted" || p["listenerId"] != float64(1) || p["connId"].(float64) < float64(protocol.TunnelAcceptedIDBase) {
		t.Fatalf("got %v, want tunnel/accepted", acc)
	}
	if data := c.Recv(); data["method"] != "tunnel/data" || data["params"].(map[string]any)["data"] != "aGk=" {
		t.Fatalf("got %v, want tunnel/data \"hi\"", data)
	}
	resp, _ = c.Call(7, "tunnel/unlisten", map[string]any{"listenerId": 1})
	if resp["result"].(map[string]any)["closed"] != true {
		t.Fatalf("unlisten: %v", resp)
	}
}
