package credmask_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/netproxy/credmask"
)

// TestNoSecretInLogs drives every logging path at debug level into one buffer (the CA,
// skipped providers, the unavailable startup, masking and rewriting), formats the
// package's values every way a caller might, and greps the lot for each real token and
// for the CA key.
func TestNoSecretInLogs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ca, err := credmask.NewCA(&credmask.CAOptions{CodexHome: t.TempDir(), SystemRootsPEM: []byte{}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ca.Leaf("api.github.com"); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"GITHUB_TOKEN": realPAT, "OPENAI_API_KEY": realOpenAI, "CUSTOM_TOK": realCustom,
		"ALIAS": realPAT, "BAD_TOK": "zz_secretvalue1",
	}
	providers := customProviders(t, `{
		"c":{"env":["CUSTOM_TOK"],"patterns":["tok_[a-z]{8}"],"url_prefixes":["127.0.0.1:8080"]},
		"d":{"env":["CUSTOM_TOK"],"patterns":["tok_[a-z]{8}"],"url_prefixes":["127.0.0.1:8080"]},
		"e":{"env":["BAD_TOK"],"patterns":["("],"url_prefixes":["127.0.0.1:8080"]},
		"f":{"env":["BAD_TOK"],"patterns":["zz_[a-z0-9]+"],"url_prefix_from_env":"NOT_A_URL"}}`)
	env["NOT_A_URL"] = "ftp://zz_secretvalue1"
	cfg := &credmask.Config{Masking: true, Providers: providers, CABundlePath: ca.TrustBundlePath(), Logger: log}
	p, err := credmask.Prepare(bashC(), env, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := credmask.Prepare([]string{"sh", "-c", "x"}, env, cfg); err != nil {
		t.Fatal(err)
	}
	h := http.Header{"Authorization": {"Bearer " + p.Env["GITHUB_TOKEN"]}}
	res := p.Broker.RewriteHeaders(credmask.Request{Scheme: "https", Host: "api.github.com"}, h)
	if h.Get("Authorization") != "Bearer "+realPAT {
		t.Fatalf("rewrite did not happen: %q", h.Get("Authorization"))
	}
	s := credmask.NewSecret(realPAT)
	log.Debug("values", "broker", p.Broker, "ca", ca, "result", res, "secret", s, "secrets", []credmask.Secret{s})
	js, _ := json.Marshal(map[string]any{"s": s})
	formatted := fmt.Sprintf("%v %+v %#v %s %q %x %v %v %s", s, s, s, s, s, s, p.Broker, ca, js)
	all := buf.String() + formatted
	for _, secret := range []string{realPAT, realOpenAI, realCustom, "zz_secretvalue1", string(ca.KeyPEMForTest()), keyBody(ca.KeyPEMForTest())} {
		if strings.Contains(all, secret) {
			t.Errorf("a secret (%d bytes, starts %.6q) appears in logs or formatting", len(secret), secret)
		}
	}
	if !strings.Contains(buf.String(), "ignoring invalid credential provider") || !strings.Contains(buf.String(), "minted leaf certificate") {
		t.Errorf("the logging paths did not run: %s", buf.String())
	}
}

// keyBody is the first base64 line of a PEM block.
func keyBody(pemBytes []byte) string {
	lines := strings.Split(string(pemBytes), "\n")
	if len(lines) > 1 {
		return lines[1]
	}
	return string(pemBytes)
}
