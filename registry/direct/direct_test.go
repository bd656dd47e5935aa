package direct_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/execlab/executor/registry/direct"
	"github.com/execlab/executor/registry/direct/directtest"
)

const (
	testKey    = "AKIDTESTEXAMPLE"
	testSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	testRegion = "eu-west-3"
)

// isolateAWS points the SDK at empty files and no IMDS, so only what a test sets is found.
func isolateAWS(t *testing.T) {
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_CONFIG_FILE": filepath.Join(dir, "none-config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "none-creds"),
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "",
		"AWS_PROFILE": "", "AWS_DEFAULT_PROFILE": "", "AWS_REGION": "", "AWS_DEFAULT_REGION": "", "HOME": dir,
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "", "AWS_WEB_IDENTITY_TOKEN_FILE": "",
	} {
		t.Setenv(k, v)
	}
}

func envCreds(t *testing.T, secret string) {
	isolateAWS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", testKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	t.Setenv("AWS_REGION", testRegion)
}

func verifier() *directtest.Verifier {
	return &directtest.Verifier{Keys: map[string]directtest.Key{testKey: {Secret: testSecret}},
		Region: testRegion, Service: direct.DefaultService}
}

func mustSigner(t *testing.T, o direct.SignerOptions) *direct.Signer {
	t.Helper()
	s, err := direct.LoadSigner(context.Background(), o)
	if err != nil {
		t.Fatalf("LoadSigner: %v", err)
	}
	return s
}

func TestRegister_EnvCredentialsRegisterAndUpgrade(t *testing.T) {
	envCreds(t, testSecret)
	got := make(chan string, 1)
	ep := directtest.NewEndpoint(t, verifier(), func(ctx context.Context, c *websocket.Conn) {
		_, msg, err := c.Read(ctx)
		if err == nil {
			got <- string(msg)
		}
	})
	ctx := context.Background()
	s := mustSigner(t, direct.SignerOptions{})
	reg, err := direct.Register(ctx, direct.Options{BaseURL: ep.URL + "/", EnvironmentID: "env-1", Signer: s})
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	if reg.EnvironmentID != "env-1" || reg.RegistrationID != "reg-env-1" || !strings.HasPrefix(reg.URL, "ws://127.0.0.1:") {
		t.Fatalf("registration = %+v", reg)
	}
	c, err := direct.Dial(ctx, reg.URL, direct.DialOptions{Signer: s})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"hello":1}`)); err != nil {
		t.Fatal(err)
	}
	if m := <-got; m != `{"hello":1}` {
		t.Fatalf("endpoint read %q", m)
	}
	_ = c.Close(websocket.StatusNormalClosure, "")
	reqs := ep.Requests()
	if len(reqs) != 2 {
		t.Fatalf("got %d requests, want 2: %+v", len(reqs), reqs)
	}
	want := []struct{ method, path, auth, body string }{
		{"POST", "/cloud/environment/env-1/direct/register", "AWS4-HMAC-SHA256 Credential=AKIDTESTEXAMPLE/<day>/eu-west-3/execute-api/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=<sig>", `{"transport":"direct_jsonrpc_v1"}`},
		{"GET", "/ws/env-1", "AWS4-HMAC-SHA256 Credential=AKIDTESTEXAMPLE/<day>/eu-west-3/execute-api/aws4_request, SignedHeaders=host;x-amz-date, Signature=<sig>", ""},
	}
	for i, w := range want {
		r := reqs[i]
		if r.Method != w.method || r.Path != w.path || r.Header["authorization"] != w.auth || r.Body != w.body {
			t.Errorf("request %d = %s %s auth %q body %q, want %s %s auth %q body %q", i, r.Method, r.Path, r.Header["authorization"], r.Body, w.method, w.path, w.auth, w.body)
		}
		if _, ok := r.Header["x-amz-security-token"]; ok {
			t.Errorf("request %d carries a security token without temporary credentials", i)
		}
	}
	if reqs[1].Query != "stage=test" {
		t.Errorf("upgrade query = %q, want stage=test (signed)", reqs[1].Query)
	}
}

func TestRegister_WrongSecretIs403(t *testing.T) {
	envCreds(t, "not-the-secret")
	ep := directtest.NewEndpoint(t, verifier(), nil)
	s := mustSigner(t, direct.SignerOptions{})
	_, err := direct.Register(context.Background(), direct.Options{BaseURL: ep.URL, EnvironmentID: "env-1", Signer: s})
	var de *direct.Error
	if !errors.As(err, &de) || de.Status != 403 || de.Kind != direct.ErrAuth {
		t.Fatalf("Register error = %v, want a 403 ErrAuth", err)
	}
	if !strings.Contains(err.Error(), "environment registry authentication error") || strings.Contains(err.Error(), "not-the-secret") {
		t.Fatalf("error text = %q", err)
	}
	_, err = direct.Dial(context.Background(), "ws"+strings.TrimPrefix(ep.URL, "http")+"/ws/env-1", direct.DialOptions{Signer: s})
	if !errors.As(err, &de) || de.Status != 403 {
		t.Fatalf("Dial error = %v, want status 403", err)
	}
}

func TestRegister_ClockSkew(t *testing.T) {
	envCreds(t, testSecret)
	ep := directtest.NewEndpoint(t, verifier(), nil)
	for _, tc := range []struct {
		offset time.Duration
		status int
	}{{-16 * time.Minute, 403}, {16 * time.Minute, 403}, {-14 * time.Minute, 0}, {14 * time.Minute, 0}} {
		s := mustSigner(t, direct.SignerOptions{Now: func() time.Time { return time.Now().Add(tc.offset) }})
		_, err := direct.Register(context.Background(), direct.Options{BaseURL: ep.URL, EnvironmentID: "e", Signer: s})
		var de *direct.Error
		switch {
		case tc.status == 0 && err != nil:
			t.Errorf("clock %v: Register = %v, want success within the 15-minute skew", tc.offset, err)
		case tc.status != 0 && (!errors.As(err, &de) || de.Status != tc.status):
			t.Errorf("clock %v: Register = %v, want status %d", tc.offset, err, tc.status)
		}
		if tc.status != 0 {
			_, err := direct.Dial(context.Background(), "ws"+strings.TrimPrefix(ep.URL, "http")+"/ws/e", direct.DialOptions{Signer: s})
			if !errors.As(err, &de) || de.Status != tc.status {
				t.Errorf("clock %v: Dial = %v, want status %d", tc.offset, err, tc.status)
			}
		}
	}
}

func TestLoadSigner_ProfileFilesWinOverEnv(t *testing.T) {
	isolateAWS(t)
	dir := t.TempDir()
	cfg, creds := filepath.Join(dir, "config"), filepath.Join(dir, "credentials")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(cfg, "[profile ci]\nregion = "+testRegion+"\n[default]\nregion = us-east-1\n")
	write(creds, "[ci]\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = profile-secret\naws_session_token = sess-token\n[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = default-secret\n")
	t.Setenv("AWS_CONFIG_FILE", cfg)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds)
	// Environment credentials are set too: an explicit profile wins, as in the reference.
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDENV")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "env-secret")
	v := &directtest.Verifier{Keys: map[string]directtest.Key{"AKIDPROFILE": {Secret: "profile-secret", Token: "sess-token"}},
		Region: testRegion, Service: "my-service"}
	ep := directtest.NewEndpoint(t, v, nil)
	s := mustSigner(t, direct.SignerOptions{Profile: "ci", Service: "my-service"})
	if s.Region() != testRegion || s.Service() != "my-service" {
		t.Fatalf("region, service = %q, %q", s.Region(), s.Service())
	}
	if _, err := direct.Register(context.Background(), direct.Options{BaseURL: ep.URL, EnvironmentID: "e", Signer: s}); err != nil {
		t.Fatalf("Register with profile ci: %v", err)
	}
	r := ep.Requests()[0]
	if !strings.Contains(r.Header["authorization"], "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token") || r.Header["x-amz-security-token"] != "sess-token" {
		t.Fatalf("profile request headers = %v", r.Header)
	}
	// The default profile, with the region flag overriding the profile's region.
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	v2 := &directtest.Verifier{Keys: map[string]directtest.Key{"AKIDDEFAULT": {Secret: "default-secret"}}, Region: "us-west-2", Service: direct.DefaultService}
	ep2 := directtest.NewEndpoint(t, v2, nil)
	s2 := mustSigner(t, direct.SignerOptions{Region: "us-west-2"})
	if _, err := direct.Register(context.Background(), direct.Options{BaseURL: ep2.URL, EnvironmentID: "e", Signer: s2}); err != nil {
		t.Fatalf("Register with the default profile: %v", err)
	}
}

func TestLoadSigner_Errors(t *testing.T) {
	isolateAWS(t)
	if _, err := direct.LoadSigner(context.Background(), direct.SignerOptions{}); err == nil || !strings.Contains(err.Error(), "did not resolve a region") {
		t.Errorf("no region: err = %v", err)
	}
	if _, err := direct.LoadSigner(context.Background(), direct.SignerOptions{Region: "r", Service: " "}); err == nil || !strings.Contains(err.Error(), "AWS service name must not be empty") {
		t.Errorf("blank service: err = %v", err)
	}
}

func TestRegisterURL(t *testing.T) {
	for _, tc := range []struct{ base, want, err string }{
		{"http://127.0.0.1:9/base/", "http://127.0.0.1:9/base/cloud/environment/e/direct/register", ""},
		{"http://localhost:9", "http://localhost:9/cloud/environment/e/direct/register", ""},
		{"https://api.example/prod", "https://api.example/prod/cloud/environment/e/direct/register", ""},
		{"http://10.0.0.1", "", "requires https for non-loopback"},
		{"ftp://127.0.0.1", "", "requires https for non-loopback"},
		{"", "", "http:// or https://"},
	} {
		got, err := direct.RegisterURL(tc.base, "e")
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("RegisterURL(%q) = %q, %v; want %q, %q", tc.base, got, err, tc.want, tc.err)
		}
	}
}

func TestParseRegistration(t *testing.T) {
	ok := `{"environment_id":"e","transport":"direct_jsonrpc_v1","registration_id":"r","url":"wss://x.example/p?a=b"}`
	for _, tc := range []struct{ body, err string }{
		{ok, ""},
		{`{"environment_id":"e"}`, "missing field `transport`"},
		{`{"environment_id":"e","transport":"x","registration_id":"r"}`, "missing field `url`"},
		{`{"environment_id":"f","transport":"direct_jsonrpc_v1","registration_id":"r","url":"wss://x"}`, "different environment id"},
		{`{"environment_id":"e","transport":"other","registration_id":"r","url":"wss://x"}`, "unsupported direct transport `other`"},
		{`{"environment_id":"e","transport":"direct_jsonrpc_v1","registration_id":"r","url":"ws://10.1.2.3/x"}`, "requires wss for non-loopback"},
		{`{"environment_id":"e","transport":"direct_jsonrpc_v1","registration_id":"r","url":"https://x"}`, "invalid websocket url"},
		{`[]`, "not a JSON object"},
	} {
		_, err := direct.ParseRegistration([]byte(tc.body), "e")
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseRegistration(%s) = %v, want %q", tc.body, err, tc.err)
		}
	}
}

func FuzzParseRegistration(f *testing.F) {
	f.Add([]byte(`{"environment_id":"e","transport":"direct_jsonrpc_v1","registration_id":"r","url":"wss://x.example/p?a=b"}`))
	f.Add([]byte(`{"environment_id":"e","transport":"direct_jsonrpc_v1","registration_id":"r","url":"ws://127.0.0.1:1/"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		reg, err := direct.ParseRegistration(b, "e")
		if err == nil && (reg.EnvironmentID != "e" || reg.Transport != direct.Transport || direct.CheckWebSocketURL(reg.URL) != nil) {
			t.Fatalf("accepted %q as %+v", b, reg)
		}
	})
}
