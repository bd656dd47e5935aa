package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/registry/client"
)

func TestValidate_RequestShapeAndOutcomes(t *testing.T) {
	tests := []struct {
		status int
		body   string
		want   error
		reason string
		text   string
	}{
		{200, `{"valid":true}`, nil, "", ""},
		{200, `{"valid":false}`, client.ErrHarnessKeyRejected, "validation_protocol", "environment registry rejected Noise relay harness key"},
		{200, `{}`, client.ErrHarnessKeyRejected, "validation_protocol", ""},
		{401, `SECRET`, client.ErrValidateUnauthorized, "registry_http", "environment registry harness key validation authentication failed (401 Unauthorized)"},
		{403, `SECRET`, nil, "registry_http", "environment registry harness key validation authentication failed (403 Forbidden)"},
		{500, `SECRET`, nil, "registry_http", "environment registry harness key validation failed"},
	}
	for _, tt := range tests {
		srv, reqs := server(t, func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(tt.status)
			io.WriteString(w, tt.body)
		})
		err := newClient(t, srv.URL, nil).Validate(context.Background(), "reg-1", "stream-9", json.RawMessage(key), "authz")
		if tt.want != nil && !errors.Is(err, tt.want) || tt.want == nil && tt.status == 200 && err != nil {
			t.Errorf("%d %s: got %v, want %v", tt.status, tt.body, err, tt.want)
		}
		if got := client.Reason(err); got != tt.reason {
			t.Errorf("%d %s: reason %q, want %q", tt.status, tt.body, got, tt.reason)
		}
		if tt.text != "" && (err == nil || err.Error() != tt.text) {
			t.Errorf("%d: text %v, want %q", tt.status, err, tt.text)
		}
		if err != nil && strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%d: error echoes the body", tt.status)
		}
		r := reqs()[0]
		if r.path != "/cloud/environment/env-1/validate" || r.header.Get("X-Codex-Noise-Stream-Id") != "stream-9" {
			t.Errorf("request %s stream header %q", r.path, r.header.Get("X-Codex-Noise-Stream-Id"))
		}
		if want := `{"executor_registration_id":"reg-1","harness_public_key":` + key + `,"harness_key_authorization":"authz"}`; r.body != want {
			t.Errorf("body:\ngot  %s\nwant %s", r.body, want)
		}
	}
}

func TestValidate_Timeout(t *testing.T) {
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	err := newClient(t, srv.URL, &client.Options{Timeout: 50 * time.Millisecond}).
		Validate(context.Background(), "reg-1", "s", json.RawMessage(key), "")
	if !errors.Is(err, client.ErrValidateTimeout) || client.Reason(err) != "validation_timeout" {
		t.Errorf("got %v (reason %q), want ErrValidateTimeout", err, client.Reason(err))
	}
}
