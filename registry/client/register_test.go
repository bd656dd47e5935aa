package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/execlab/executor/registry/client"
)

const key = `{"suite":"S","x25519_public_key":"A","mlkem768_public_key":"B"}`

type recorded struct {
	method, path string
	header       http.Header
	body         string
}

// server answers every request with handler and records it.
func server(t *testing.T, handler func(w http.ResponseWriter, r *http.Request)) (*httptest.Server, func() []recorded) {
	var mu sync.Mutex
	var reqs []recorded
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs = append(reqs, recorded{r.Method, r.URL.Path, r.Header.Clone(), string(b)})
		mu.Unlock()
		handler(w, r)
	}))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return srv, func() []recorded {
		mu.Lock()
		defer mu.Unlock()
		return append([]recorded(nil), reqs...)
	}
}

func okRegister(w http.ResponseWriter, _ *http.Request) {
	io.WriteString(w, `{"environment_id":"env-1","url":"wss://rv.example/x?sig=abc","security_profile":"noise_hybrid_ik_v1","executor_registration_id":"reg-1","transport_policy":{"version":1},"extra":true}`)
}

func newClient(t *testing.T, base string, opts *client.Options) *client.Client {
	t.Helper()
	b, err := client.NewBearer("tok-secret")
	if err != nil {
		t.Fatal(err)
	}
	o := client.Options{BaseURL: base, EnvironmentID: "env-1", Auth: b}
	if opts != nil {
		o.Timeout, o.RetryInitial, o.RetryMax, o.Traceparent = opts.Timeout, opts.RetryInitial, opts.RetryMax, opts.Traceparent
		if opts.Auth != nil {
			o.Auth = opts.Auth
		}
	}
	c, err := client.New(&o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRegister_RequestShapeAndExtraFields(t *testing.T) {
	srv, reqs := server(t, okRegister)
	c := newClient(t, srv.URL+"/backend-api//", &client.Options{Traceparent: func(context.Context) string {
		return "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	}})
	reg, err := c.Register(context.Background(), json.RawMessage(key))
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	want := client.Registration{EnvironmentID: "env-1", URL: "wss://rv.example/x?sig=abc", RegistrationID: "reg-1"}
	if reg != want {
		t.Errorf("registration: got %+v, want %+v", reg, want)
	}
	if strings.Contains(reg.String(), "sig=") {
		t.Errorf("Registration.String leaks the url query: %s", reg)
	}
	r := reqs()[0]
	if r.method != "POST" || r.path != "/backend-api/cloud/environment/env-1/register" {
		t.Errorf("request: got %s %s", r.method, r.path)
	}
	if got, want := r.body, `{"security_profile":"noise_hybrid_ik_v1","executor_public_key":`+key+`}`; got != want {
		t.Errorf("body:\ngot  %s\nwant %s", got, want)
	}
	for k, want := range map[string]string{"Content-Type": "application/json", "Accept": "*/*",
		"Authorization": "Bearer tok-secret", "Traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"} {
		if got := r.header.Get(k); got != want {
			t.Errorf("header %s: got %q, want %q", k, got, want)
		}
	}
	for _, k := range []string{"User-Agent", "Originator", "Chatgpt-Account-Id", "Accept-Encoding"} {
		if v := r.header.Get(k); v != "" {
			t.Errorf("header %s: got %q, want none", k, v)
		}
	}
}

func TestRegister_ResponseValidation(t *testing.T) {
	tests := []struct{ body, want string }{
		{`nope`, "exec-server protocol error: invalid environment registry executor registration response"},
		{`{"environment_id":"env-1","url":"ws://h/x","security_profile":"noise_hybrid_ik_v1"}`, "exec-server protocol error: invalid environment registry executor registration response"},
		{`{"environment_id":"env-2","url":"ws://h/x","security_profile":"noise_hybrid_ik_v1","executor_registration_id":"r"}`, "exec-server protocol error: environment registry returned a different environment id"},
		{`{"environment_id":"env-1","url":"ws://h/x","security_profile":"plain","executor_registration_id":"r"}`, "exec-server protocol error: environment registry returned unsupported security profile `plain`"},
		{`{"environment_id":"env-1","url":"ws://h/x","security_profile":"noise_hybrid_ik_v1","executor_registration_id":""}`, "exec-server protocol error: invalid environment registry executor registration response"},
		{`{"environment_id":"env-1","url":"ws://h/x","security_profile":"noise_hybrid_ik_v1","executor_registration_id":" r"}`, "exec-server protocol error: environment registry returned an invalid executor registration id"},
		{`{"environment_id":"env-1","url":"http://h/x","security_profile":"noise_hybrid_ik_v1","executor_registration_id":"r"}`, "exec-server protocol error: invalid environment registry executor registration response"},
	}
	for _, tt := range tests {
		srv, _ := server(t, func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, tt.body) })
		_, err := newClient(t, srv.URL, nil).Register(context.Background(), json.RawMessage(key))
		if err == nil || err.Error() != tt.want {
			t.Errorf("body %s: got %v, want %q", tt.body, err, tt.want)
		}
		if !errors.Is(err, client.ErrProtocol) {
			t.Errorf("body %s: error is not ErrProtocol", tt.body)
		}
	}
}

func TestRegister_ErrorMappingNoBodies(t *testing.T) {
	tests := []struct {
		status int
		want   string
	}{
		{401, "environment registry authentication error: environment registry authentication failed (401 Unauthorized): response body omitted"},
		{403, "environment registry authentication error: environment registry authentication failed (403 Forbidden): response body omitted"},
		{503, "environment registry request failed: environment registry request failed (503 Service Unavailable): environment registry executor registration failed"},
		{302, "environment registry request failed: environment registry request failed (302 Found): environment registry executor registration failed"},
		{404, "environment registry request failed: environment registry request failed (404 Not Found): environment registry executor registration failed"},
		{500, "environment registry request failed: environment registry request failed (500 Internal Server Error): environment registry executor registration failed"},
	}
	for _, tt := range tests {
		srv, reqs := server(t, func(w http.ResponseWriter, r *http.Request) {
			if tt.status == 302 {
				if r.URL.Path == "/elsewhere" {
					t.Errorf("redirect target was requested")
				}
				http.Redirect(w, r, "/elsewhere", http.StatusFound)
				return
			}
			w.WriteHeader(tt.status)
			io.WriteString(w, `{"error":{"code":"x","message":"SECRET BODY"}}`)
		})
		_, err := newClient(t, srv.URL, nil).Register(context.Background(), json.RawMessage(key))
		if err == nil || err.Error() != tt.want {
			t.Errorf("status %d: got %v, want %q", tt.status, err, tt.want)
		}
		if len(reqs()) != 1 {
			t.Errorf("status %d: got %d requests, want 1 (no retry, no redirect)", tt.status, len(reqs()))
		}
	}
}

func TestRegister_RetriesConflictForever(t *testing.T) {
	n := 0
	var mu sync.Mutex
	srv, reqs := server(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		i := n
		mu.Unlock()
		switch {
		case i <= 3:
			w.WriteHeader(503)
			io.WriteString(w, `{"error":{"code":"registration_conflict"}}`)
		case i <= 5:
			w.WriteHeader(502)
			io.WriteString(w, `{"error":{"code":"authentication_service_unavailable"}}`)
		default:
			okRegister(w, r)
		}
	})
	c := newClient(t, srv.URL, &client.Options{RetryInitial: time.Millisecond, RetryMax: 4 * time.Millisecond})
	if _, err := c.Register(context.Background(), json.RawMessage(key)); err != nil {
		t.Fatalf("Register: %v", err)
	}
	rs := reqs()
	if len(rs) != 6 || rs[0].body != rs[5].body {
		t.Errorf("got %d attempts, want 6 with the same body", len(rs))
	}
}

func TestRegister_TimeoutAndConnectionRefused(t *testing.T) {
	release := make(chan struct{})
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		select { // stall the body
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	_, err := newClient(t, srv.URL, &client.Options{Timeout: 100 * time.Millisecond}).Register(context.Background(), json.RawMessage(key))
	if want := "environment registry request failed: route-aware request timed out"; err == nil || err.Error() != want {
		t.Errorf("stalled body: got %v, want %q", err, want)
	}
	_, err = newClient(t, "http://127.0.0.1:1/p?x=SECRET", nil).Register(context.Background(), json.RawMessage(key))
	if want := "environment registry request failed: error sending request for url (http://127.0.0.1:1/p"; err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("refused: got %v, want prefix %q without query", err, want)
	}
}

func TestNew_EnvironmentIDRules(t *testing.T) {
	b, _ := client.NewBearer("t")
	tests := []struct{ id, want string }{
		{"env-1", ""},
		{" env-1 ", ""},
		{"ccarenv_b64_Y2Fhcy1zdGFnaW5nLWV4ZWN1dG9yLWVudmlyb25tZW50LTE", ""},
		{"", "environment id is required for remote exec-server registration"},
		{"bad/../id", "environment id must contain only ASCII letters, numbers, '-' or '_'"},
		{strings.Repeat("a", 257), "environment id cannot be longer than 256 characters"},
	}
	for _, tt := range tests {
		c, err := client.New(&client.Options{BaseURL: "http://127.0.0.1:9", EnvironmentID: tt.id, Auth: b})
		switch {
		case tt.want == "" && (err != nil || c.EnvironmentID() != strings.TrimSpace(tt.id)):
			t.Errorf("id %q: got %v, want accepted", tt.id, err)
		case tt.want != "" && (err == nil || !strings.HasSuffix(err.Error(), tt.want)):
			t.Errorf("id %q: got %v, want %q", tt.id, err, tt.want)
		}
	}
}

// TestRegister_ExitNoticeToken: our registry's exit_notice_token is kept (and never
// printed); a released registry's response (none), an ill-typed, oversized or
// non-printable one give no token and no notice, without failing the registration.
func TestRegister_ExitNoticeToken(t *testing.T) {
	const head = `{"environment_id":"env-1","url":"wss://rv.example/x?sig=abc","security_profile":"noise_hybrid_ik_v1","executor_registration_id":"reg-1"`
	tests := []struct{ member, want string }{
		{``, ""},
		{`,"exit_notice_token":"ext_abc-DEF_1"`, "ext_abc-DEF_1"},
		{`,"exit_notice_token":7`, ""},
		{`,"exit_notice_token":""`, ""},
		{`,"exit_notice_token":"a b"`, ""},
		{`,"exit_notice_token":"` + strings.Repeat("x", 129) + `"`, ""},
	}
	for _, tt := range tests {
		srv, _ := server(t, func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, head+tt.member+"}") })
		c := newClient(t, srv.URL+"/base/", nil)
		reg, err := c.Register(context.Background(), json.RawMessage(key))
		if err != nil {
			t.Fatalf("%s: Register: %v", tt.member, err)
		}
		if reg.ExitNoticeToken != tt.want {
			t.Errorf("%s: token %q, want %q", tt.member, reg.ExitNoticeToken, tt.want)
		}
		u, body, ok := c.ExitNotice(reg)
		if ok != (tt.want != "") {
			t.Errorf("%s: ExitNotice ok=%v, want %v", tt.member, ok, tt.want != "")
		}
		if !ok {
			continue
		}
		if u != srv.URL+"/base/cloud/environment/env-1/executor-exited" {
			t.Errorf("notice url %s", u)
		}
		if got, want := string(body), `{"executor_registration_id":"reg-1","token":"`+tt.want+`"}`; got != want {
			t.Errorf("notice body %s, want %s", got, want)
		}
		if strings.Contains(reg.String(), tt.want) {
			t.Errorf("Registration.String prints the exit notice token")
		}
	}
}
