//go:build linux

package observability_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
	"github.com/execlab/executor/internal/syncbuf"
	"github.com/execlab/executor/noise"
)

// workload is the dev-like traffic of TestPrometheus: three execs (exit 0, exit 3, output),
// one handshake the registry's validation refuses, and one connect to an environment
// with no executor (409).
func workload(t *testing.T, s *stack) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, err := s.dial(ctx, t, nil)
	if err != nil {
		t.Fatalf("dialing the executor: %v", err)
	}
	runProcess(ctx, t, c, "p-ok", "true")
	runProcess(ctx, t, c, "p-fail", "sh", "-c", "exit 3")
	runProcess(ctx, t, c, "p-out", "sh", "-c", "echo observability")
	c.Close()

	if c, err := s.dial(ctx, t, badAuthorization()); err == nil {
		c.Close()
		t.Fatal("a stream with a corrupted authorization was served")
	}

	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.registryURL+"/cloud/environment/env-offline/connect",
		strings.NewReader(`{"harness_public_key":`+harnessKeyJSON(t)+`}`))
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("connect to an offline environment: got %d, want 409", resp.StatusCode)
	}
}

// TestPrometheus runs a real Prometheus server (Debian's prometheus package) against a
// registry and an executor during a dev-like run: every scrape passes `promtool check
// metrics`, and PromQL through Prometheus's HTTP API shows the counters moved.
func TestPrometheus(t *testing.T) {
	promBin := promtool(t, "prometheus")
	s := startStack(t)
	workload(t, s)

	regText, execText := scrape(t, s.registryMetrics), scrape(t, s.executorMetrics)
	checkMetrics(t, "registry", regText)
	checkMetrics(t, "executor", execText)
	checkRuleNames(t, regText+execText)

	promAddr := startPrometheus(t, promBin, s.registryMetrics, s.executorMetrics)
	// Each query must return one series whose value satisfies want, once both targets have
	// been scraped after the workload (scrape interval 1 s; bounded wait).
	queries := []struct {
		promql string
		want   func(float64) bool
		what   string
	}{
		{`executor_processes_started_total`, func(v float64) bool { return v >= 3 }, ">= 3"},
		{`executor_processes_exited_total{class="error"}`, func(v float64) bool { return v >= 1 }, ">= 1"},
		{`sum(executor_rpc_requests_total{method="process/start",code="0"})`, func(v float64) bool { return v >= 3 }, ">= 3"},
		{`executor_process_output_bytes_total`, func(v float64) bool { return v >= float64(len("observability\n")) }, ">= 14"},
		{`executor_relay_handshakes_total{outcome="ok"}`, func(v float64) bool { return v >= 1 }, ">= 1"},
		{`executor_relay_handshakes_total{outcome="unauthorized"}`, func(v float64) bool { return v >= 1 }, ">= 1"}, // the SDK retries
		{`executor_registry_registrations_total{kind="initial"}`, func(v float64) bool { return v == 1 }, "== 1"},
		{`registry_requests_total{endpoint="connect",code="409"}`, func(v float64) bool { return v == 1 }, "== 1"},
		{`registry_requests_total{endpoint="register",code="200"}`, func(v float64) bool { return v == 1 }, "== 1"},
		{`registry_validations_total{outcome="invalid"}`, func(v float64) bool { return v >= 1 }, ">= 1"},
		{`registry_validations_total{outcome="valid"}`, func(v float64) bool { return v >= 1 }, ">= 1"},
		{`rendezvous_executor_sockets`, func(v float64) bool { return v == 1 }, "== 1"},
		{`registry_location_changes_total{reason="attached"}`, func(v float64) bool { return v >= 1 }, ">= 1"},
		{`registry_node_lease_held`, func(v float64) bool { return v == 1 }, "== 1"},
		{`rendezvous_frames_relayed_total`, func(v float64) bool { return v > 0 }, "> 0"},
		{`sum(up)`, func(v float64) bool { return v == 2 }, "== 2"},
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, q := range queries {
		for {
			v, ok := queryProm(t, promAddr, q.promql)
			if ok && q.want(v) {
				t.Logf("%s = %v", q.promql, v)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("PromQL %s: got %v (present %v), want %s", q.promql, v, ok, q.what)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
}

// harnessKeyJSON is a valid harness key (the 409 comes before any use).
func harnessKeyJSON(t *testing.T) string {
	t.Helper()
	id, err := noise.GenerateIdentity(nil)
	if err != nil {
		t.Fatal(err)
	}
	pub := id.Public()
	return string(pub.AppendJSON(nil))
}

// startPrometheus runs prometheus on a free loopback port with a 1 s scrape of both
// targets, and stops it at cleanup.
func startPrometheus(t *testing.T, bin, registryTarget, executorTarget string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: registry
    static_configs: [{targets: [%q]}]
  - job_name: executor
    static_configs: [{targets: [%q]}]
`, registryTarget, executorTarget)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := refbin.FreeAddr(t) // prometheus is told its port: one below the ephemeral range
	cmd := exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	var logs lockedBuf
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }() // owner: this cleanup
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("prometheus logs:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return addr
			}
		}
		select {
		case <-done:
			t.Fatalf("prometheus exited:\n%s", logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// queryProm runs an instant query and returns the value of its single series.
func queryProm(t *testing.T, addr, promql string) (float64, bool) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(promql))
	if err != nil {
		t.Fatalf("querying prometheus: %v", err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Error  string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("decoding the query answer: %v", err)
	}
	if r.Status != "success" {
		t.Fatalf("PromQL %s: %s", promql, r.Error)
	}
	if len(r.Data.Result) != 1 {
		return 0, false
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// metricRef matches the project's metric names in rules and dashboards.
var metricRef = regexp.MustCompile(`\b(?:executor|registry|rendezvous)_[a-z_]+\b`)

// checkRuleNames fails when the alert rules or the dashboard name a metric the binaries do
// not export (a renamed metric would silently disable an alert).
func checkRuleNames(t *testing.T, scrapes string) {
	t.Helper()
	for _, f := range []string{"alerts.yml", "dashboard.json"} {
		b, err := os.ReadFile(filepath.Join(refbin.RepoRoot(), "deploy", "observability", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range metricRef.FindAllString(string(b), -1) {
			base := name
			for _, suf := range []string{"_bucket", "_count", "_sum"} {
				base = strings.TrimSuffix(base, suf)
			}
			if !strings.Contains(scrapes, "# TYPE "+base+" ") {
				t.Errorf("%s names %s, which no scrape exports", f, name)
			}
		}
	}
}

// TestAlertRules runs `promtool check rules` on deploy/observability/alerts.yml.
func TestAlertRules(t *testing.T) {
	bin := promtool(t, "promtool")
	out, err := exec.Command(bin, "check", "rules", filepath.Join(refbin.RepoRoot(), "deploy", "observability", "alerts.yml")).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("SUCCESS")) {
		t.Fatalf("promtool check rules printed no SUCCESS:\n%s", out)
	}
}

// lockedBuf is a buffer written by one goroutine while the test reads it.
type lockedBuf = syncbuf.Buffer
