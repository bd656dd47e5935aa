package api_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/execlab/executor/registry/api"
)

func TestValidateEnvironmentID(t *testing.T) {
	tests := []struct {
		in, want string
		err      error
	}{
		{"env-1", "env-1", nil},
		{" env-1 ", "env-1", nil},
		{"", "", api.ErrEnvironmentIDRequired},
		{"  ", "", api.ErrEnvironmentIDRequired},
		{"bad/../id", "", api.ErrEnvironmentIDCharset},
		{"a b", "", api.ErrEnvironmentIDCharset},
		{"é", "", api.ErrEnvironmentIDCharset},
		{strings.Repeat("a", 256), strings.Repeat("a", 256), nil},
		{strings.Repeat("a", 257), "", api.ErrEnvironmentIDTooLong},
		{"ccarenv_b64_Y2Fhcy1zdGFnaW5nLWV4ZWN1dG9yLWVudmlyb25tZW50LTE", "ccarenv_b64_Y2Fhcy1zdGFnaW5nLWV4ZWN1dG9yLWVudmlyb25tZW50LTE", nil},
	}
	for _, tt := range tests {
		got, err := api.ValidateEnvironmentID(tt.in)
		if got != tt.want || !errors.Is(err, tt.err) {
			t.Errorf("ValidateEnvironmentID(%q): got (%q, %v), want (%q, %v)", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestValidateRegistrationID(t *testing.T) {
	for _, tt := range []struct {
		in string
		ok bool
	}{
		{"reg-1", true}, {"", false}, {" reg", false}, {"reg ", false},
		{strings.Repeat("r", 256), true}, {strings.Repeat("r", 257), false},
	} {
		if err := api.ValidateRegistrationID(tt.in); (err == nil) != tt.ok {
			t.Errorf("ValidateRegistrationID(%q): got err %v, want ok=%v", tt.in, err, tt.ok)
		}
	}
}

func TestJoinURL(t *testing.T) {
	tests := []struct{ base, path, want string }{
		{"http://h:1", "/cloud/environment/e/register", "http://h:1/cloud/environment/e/register"},
		{" http://h:1// ", "/cloud/environment/e/register", "http://h:1/cloud/environment/e/register"},
		{"http://h:1/backend-api/", "/cloud/x", "http://h:1/backend-api/cloud/x"},
	}
	for _, tt := range tests {
		got, err := api.JoinURL(tt.base, tt.path)
		if err != nil || got != tt.want {
			t.Errorf("JoinURL(%q, %q): got (%q, %v), want %q", tt.base, tt.path, got, err, tt.want)
		}
	}
	if _, err := api.JoinURL(" / ", "/x"); !errors.Is(err, api.ErrEmptyBaseURL) {
		t.Errorf("JoinURL of a blank base: got %v, want ErrEmptyBaseURL", err)
	}
}

func TestSplitPath(t *testing.T) {
	tests := []struct {
		in          string
		env, suffix string
		ok          bool
	}{
		{"/cloud/environment/env-1/register", "env-1", "register", true},
		{"/cloud/environment/env-1/connect", "env-1", "connect", true},
		{"/cloud/environment//register", "", "", false},
		{"/cloud/environment/env-1/", "", "", false},
		{"/cloud/environment/env-1/a/b", "", "", false},
		{"/cloud/environment/env-1", "", "", false},
		{"/other/env-1/register", "", "", false},
	}
	for _, tt := range tests {
		env, suffix, ok := api.SplitPath(tt.in)
		if env != tt.env || suffix != tt.suffix || ok != tt.ok {
			t.Errorf("SplitPath(%q): got (%q, %q, %v), want (%q, %q, %v)", tt.in, env, suffix, ok, tt.env, tt.suffix, tt.ok)
		}
	}
	if got := api.Path("e", api.ValidateSuffix); got != "/cloud/environment/e/validate" {
		t.Errorf("Path: got %q", got)
	}
}

func TestRetryable(t *testing.T) {
	tests := []struct {
		status         int
		code           string
		register, conn bool
	}{
		{503, api.CodeRegistrationConflict, true, true},
		{502, api.CodeAuthServiceUnavailable, true, true},
		{503, "", false, true},
		{500, "", false, true},
		{409, api.CodeEnvironmentOffline, false, true},
		{409, api.CodeRegistrationFenced, false, false},
		{429, "", false, true},
		{408, "", false, true},
		{401, api.CodeUnauthorized, false, false},
		{404, "", false, false},
	}
	for _, tt := range tests {
		if got := api.RegisterRetryable(tt.status, tt.code); got != tt.register {
			t.Errorf("RegisterRetryable(%d, %q): got %v, want %v", tt.status, tt.code, got, tt.register)
		}
		if got := api.ConnectRetryable(tt.status, tt.code); got != tt.conn {
			t.Errorf("ConnectRetryable(%d, %q): got %v, want %v", tt.status, tt.code, got, tt.conn)
		}
	}
}

// TestWireShapes pins member names and order of the bodies against spec/registry-auth.md.
func TestWireShapes(t *testing.T) {
	key := json.RawMessage(`{"suite":"s"}`)
	tests := []struct {
		v    any
		want string
	}{
		{api.RegisterRequest{SecurityProfile: api.SecurityProfile, ExecutorPublicKey: key},
			`{"security_profile":"noise_hybrid_ik_v1","executor_public_key":{"suite":"s"}}`},
		{api.RegisterResponse{EnvironmentID: "e", URL: "ws://x", SecurityProfile: api.SecurityProfile, ExecutorRegistrationID: "r"},
			`{"environment_id":"e","url":"ws://x","security_profile":"noise_hybrid_ik_v1","executor_registration_id":"r"}`},
		{api.ValidateRequest{ExecutorRegistrationID: "r", HarnessPublicKey: key, HarnessKeyAuthorization: ""},
			`{"executor_registration_id":"r","harness_public_key":{"suite":"s"},"harness_key_authorization":""}`},
		{api.ValidateResponse{Valid: true}, `{"valid":true}`},
		{api.ConnectRequest{HarnessPublicKey: key}, `{"harness_public_key":{"suite":"s"}}`},
		{api.ConnectResponse{EnvironmentID: "e", URL: "ws://x", SecurityProfile: api.SecurityProfile, ExecutorRegistrationID: "r", ExecutorPublicKey: key, HarnessKeyAuthorization: "a"},
			`{"environment_id":"e","url":"ws://x","security_profile":"noise_hybrid_ik_v1","executor_registration_id":"r","executor_public_key":{"suite":"s"},"harness_key_authorization":"a"}`},
		{api.ErrorResponse{Error: api.ErrorBody{Code: api.CodeEnvironmentOffline, Message: "m"}},
			`{"error":{"code":"environment_offline","message":"m"}}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.v)
		if err != nil || string(b) != tt.want {
			t.Errorf("json.Marshal(%T): got %s (%v), want %s", tt.v, b, err, tt.want)
		}
	}
	s := api.ConnectResponse{URL: "ws://x/?sig=secret", HarnessKeyAuthorization: "secret"}.String()
	if strings.Contains(s, "secret") {
		t.Errorf("ConnectResponse.String leaks credentials: %s", s)
	}
}

func FuzzSplitPath(f *testing.F) {
	for _, s := range []string{"/cloud/environment/env-1/register", "/cloud/environment//x", "/cloud/environment/a/b/c", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		env, suffix, ok := api.SplitPath(p)
		if !ok {
			return
		}
		if got := api.Path(env, suffix); got != p {
			t.Fatalf("SplitPath(%q) = (%q, %q) does not round-trip: %q", p, env, suffix, got)
		}
	})
}

func FuzzCanonicalPublicKey(f *testing.F) {
	f.Add([]byte(`{"suite":"x"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := api.CanonicalPublicKey(raw)
		if err != nil {
			return
		}
		again, err := api.CanonicalPublicKey(c)
		if err != nil || string(again) != string(c) {
			t.Fatalf("canonical form is not a fixed point: %s -> %s (%v)", c, again, err)
		}
	})
}
