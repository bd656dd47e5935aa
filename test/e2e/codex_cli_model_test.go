package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// scriptedModel is an offline stand-in for the OpenAI Responses API (POST /v1/responses,
// server-sent events) that plays a two-turn script for `codex exec`:
//
//	request without our tool output → one exec_command function call running cmd
//	request carrying our tool output → one assistant message (finalText), ending the turn
//
// Event shapes, as the released CLI (0.169.0, 0.171.0) accepts them: each SSE event is
// "event: <type>\ndata: <json with the same type>\n\n"; a turn is response.created, one
// response.output_item.done per output item, then response.completed with the response id
// and a usage object. The CLI offers the model an `exec_command` function tool whose
// arguments are a JSON string `{"cmd": "<shell command>"}` and sends its result back as an
// input item `{"type":"function_call_output","call_id":…,"output":"…Output:\n<text>"}`.
//
// It binds 127.0.0.1 only. Every request body is kept for assertions.
type scriptedModel struct {
	srv       *httptest.Server
	cmd       string
	finalText string

	mu       sync.Mutex // guards requests and problems: handlers run on server goroutines
	requests []modelRequest
	problems []string
}

// modelRequest is the part of a Responses API request body the script looks at.
type modelRequest struct {
	Raw   []byte            `json:"-"` // the whole body, for searching
	Model string            `json:"model"`
	Input []json.RawMessage `json:"input"`
	Tools []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
}

// modelCallID is the call id of the scripted tool call; the CLI echoes it in its output item.
const modelCallID = "call_e2e_exec"

func newScriptedModel(t *testing.T, cmd, finalText string) *scriptedModel {
	t.Helper()
	m := &scriptedModel{cmd: cmd, finalText: finalText}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve)) // 127.0.0.1:0
	t.Cleanup(m.srv.Close)
	return m
}

// BaseURL is the value for a model provider's base_url.
func (m *scriptedModel) BaseURL() string { return m.srv.URL + "/v1" }

func (m *scriptedModel) problem(format string, args ...any) {
	m.mu.Lock()
	m.problems = append(m.problems, fmt.Sprintf(format, args...))
	m.mu.Unlock()
}

func (m *scriptedModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/responses" {
		m.problem("unexpected request %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	if enc := r.Header.Get("Content-Encoding"); enc != "" && enc != "identity" {
		m.problem("request body has Content-Encoding %q; the script reads plain JSON only", enc)
		http.Error(w, "unsupported content encoding", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		m.problem("reading request body: %v", err)
		return
	}
	var req modelRequest
	if err := json.Unmarshal(body, &req); err != nil {
		m.problem("decoding request body: %v", err)
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	req.Raw = body
	m.mu.Lock()
	m.requests = append(m.requests, req)
	turn := len(m.requests)
	m.mu.Unlock()

	var item map[string]any
	if _, answered := toolOutput(req); !answered {
		if !req.offers("exec_command") {
			m.problem("request %d offers no exec_command tool; tools: %v", turn, req.toolNames())
		}
		args, _ := json.Marshal(map[string]string{"cmd": m.cmd})
		item = map[string]any{"type": "function_call", "id": "fc_e2e", "call_id": modelCallID,
			"name": "exec_command", "arguments": string(args), "status": "completed"}
	} else {
		item = map[string]any{"type": "message", "id": fmt.Sprintf("msg_e2e_%d", turn), "role": "assistant",
			"status": "completed", "content": []map[string]any{{"type": "output_text", "text": m.finalText, "annotations": []any{}}}}
	}
	id := fmt.Sprintf("resp_e2e_%d", turn)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	for _, ev := range []map[string]any{
		{"type": "response.created", "response": map[string]any{"id": id}},
		{"type": "response.output_item.done", "output_index": 0, "item": item},
		{"type": "response.completed", "response": map[string]any{"id": id, "usage": map[string]any{
			"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}},
	} {
		data, _ := json.Marshal(ev)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev["type"], data)
	}
}

func (r modelRequest) offers(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func (r modelRequest) toolNames() []string {
	var names []string
	for _, t := range r.Tools {
		names = append(names, t.Name)
	}
	return names
}

// toolOutput returns the output the CLI sent back for the scripted call, as text: a string
// output as is, any other form (content items) as its JSON.
func toolOutput(r modelRequest) (string, bool) {
	for _, raw := range r.Input {
		var it struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		}
		if json.Unmarshal(raw, &it) != nil || it.Type != "function_call_output" || it.CallID != modelCallID {
			continue
		}
		var s string
		if json.Unmarshal(it.Output, &s) == nil {
			return s, true
		}
		return string(it.Output), true
	}
	return "", false
}

// snapshot returns the requests seen so far and any protocol problems.
func (m *scriptedModel) snapshot() ([]modelRequest, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]modelRequest(nil), m.requests...), strings.Join(m.problems, "; ")
}
