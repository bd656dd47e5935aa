package executor_test

import (
	"testing"
)

// The process extensions (docs/protocol-extensions.md) through the JSON-RPC layer:
// advertised in capabilities, params decoded serde-strictly like every other method.

func TestExtensions_Advertised(t *testing.T) {
	h := newHarness(t, nil)
	c := h.dial()
	init := c.Handshake("")
	info := init["environmentInfo"].(map[string]any)
	caps := info["capabilities"].(map[string]any)
	for _, flag := range []string{"processCloseStdin", "processResizePty", "processStartPtySize", "processSendSignal"} {
		if caps[flag] != true {
			t.Errorf("initialize capabilities[%s] = %v, want true", flag, caps[flag])
		}
	}
	resp, _ := c.Call(2, "environment/info", nil)
	caps = resp["result"].(map[string]any)["capabilities"].(map[string]any)
	if caps["processCloseStdin"] != true || caps["processResizePty"] != true {
		t.Errorf("environment/info capabilities = %v, want the extension flags", caps)
	}
}

func TestExtensions_ParamsDecoding(t *testing.T) {
	tests := []struct {
		method string
		params any
		code   float64
		msg    string
	}{
		{"process/closeStdin", map[string]any{}, -32602, "missing field `processId`"},
		{"process/closeStdin", map[string]any{"processId": 3}, -32602, "invalid type: number, expected a string"},
		{"process/resizePty", map[string]any{"processId": "p"}, -32602, "missing field `size`"},
		{"process/resizePty", map[string]any{"processId": "p", "size": map[string]any{"rows": 10}}, -32602, "missing field `cols`"},
		{"process/resizePty", map[string]any{"processId": "p", "size": map[string]any{"rows": 70000, "cols": 1}}, -32602, "invalid number"},
		{"process/resizePty", map[string]any{"processId": "p", "size": map[string]any{"rows": 0, "cols": 1}}, -32602, "pty size rows and cols must be at least 1"},
		{"process/sendSignal", map[string]any{"processId": "p", "signal": "interrupt"}, -32602,
			"unknown variant `interrupt`, expected one of `INT`, `TERM`, `HUP`, `QUIT`, `KILL`, `USR1`, `USR2`"},
		{"process/start", map[string]any{"processId": "p", "argv": []string{"true"}, "cwd": "file:///", "env": map[string]string{}, "tty": true, "ptySize": "big"}, -32602,
			"invalid type: string \"big\", expected struct PtySize"},
	}
	h := newHarness(t, nil)
	c := h.dial()
	c.Handshake("")
	for i, tt := range tests {
		resp, _ := c.Call(10+i, tt.method, tt.params)
		if code, msg := errMessage(resp); code != tt.code || msg != tt.msg {
			t.Errorf("%s %v: got %v %q, want %v %q", tt.method, tt.params, code, msg, tt.code, tt.msg)
		}
	}
}

func TestExtensions_UnknownProcessStatuses(t *testing.T) {
	h := newHarness(t, nil)
	c := h.dial()
	c.Handshake("")
	tests := []struct {
		method string
		params any
		want   any
	}{
		{"process/closeStdin", map[string]any{"processId": "nope"}, map[string]any{"status": "unknownProcess"}},
		{"process/resizePty", map[string]any{"processId": "nope", "size": map[string]any{"rows": 1, "cols": 1}}, map[string]any{"status": "unknownProcess"}},
		{"process/sendSignal", map[string]any{"processId": "nope", "signal": "TERM"}, map[string]any{}},
	}
	for i, tt := range tests {
		resp, _ := c.Call(10+i, tt.method, tt.params)
		got, _ := resp["result"].(map[string]any)
		if len(got) != len(tt.want.(map[string]any)) || (len(got) > 0 && got["status"] != tt.want.(map[string]any)["status"]) {
			t.Errorf("%s: got %v, want result %v", tt.method, resp, tt.want)
		}
	}
}
