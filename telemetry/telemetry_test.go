package telemetry_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/execlab/executor/executor/process"
	"github.com/execlab/executor/relay/mux"
	"github.com/execlab/executor/telemetry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serveMetrics serves reg's metrics on addr until the test ends and returns the bound
// address.
func serveMetrics(t *testing.T, addr string, reg prometheus.Gatherer) string {
	t.Helper()
	srv, err := telemetry.Start(addr, reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv.Addr()
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: status %d", url, resp.StatusCode)
	}
	return string(b)
}

// TestStart_LoopbackAndMetrics: ":0" binds loopback; the scrape has the runtime collectors
// and the executor's series, moved by the observer calls.
func TestStart_LoopbackAndMetrics(t *testing.T) {
	reg := telemetry.NewRegistry()
	e := telemetry.NewExecutor(reg)
	addr := serveMetrics(t, ":0", reg)
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("Addr = %s, want 127.0.0.1:…", addr)
	}
	e.RequestHandled("process/start", "0", time.Millisecond)
	e.RequestHandled("other", "-32601", time.Millisecond)
	e.ProcessStarted()
	e.ProcessExited(process.ExitSandboxDenied)
	e.OutputBytes(7)
	e.FrameDropped(mux.DropMalformed)
	e.TrackSessions(func() int { return 3 })
	e.TunnelListenEvent("accepted")
	text := get(t, "http://"+addr+"/metrics")
	for _, want := range []string{
		"go_goroutines ", "process_resident_memory_bytes ",
		`executor_rpc_requests_total{code="0",method="process/start"} 1`,
		`executor_rpc_requests_total{code="-32601",method="other"} 1`,
		`executor_processes_exited_total{class="sandbox_denied"} 1`,
		"executor_sandbox_denials_total 1", "executor_process_output_bytes_total 7",
		`executor_relay_frames_dropped_total{reason="malformed"} 1`, "executor_sessions 3",
		`executor_rpc_requests_total{code="0",method="fs/readFile"} 0`, // pre-created
		`executor_tunnel_listen_events_total{event="accepted"} 1`,
		`executor_tunnel_listen_events_total{event="refused"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
}

// TestRegistryMiddleware: API endpoints are counted by status; other paths (rendezvous
// upgrades, /readyz) pass through unwrapped and uncounted.
func TestRegistryMiddleware(t *testing.T) {
	reg := telemetry.NewRegistry()
	r := telemetry.NewRegistryMetrics(reg)
	var sawWrapped bool
	h := r.Middleware(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, "/connect") {
			w.WriteHeader(http.StatusConflict)
			return
		}
		_, isRecorder := w.(*httptest.ResponseRecorder)
		sawWrapped = !isRecorder
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/cloud/environment/e1/connect", nil))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/relay/anything", nil))
	if sawWrapped {
		t.Error("a non-API path got a wrapped ResponseWriter (rendezvous upgrades need the original)")
	}
	r.Validated("invalid")
	text := get(t, "http://"+serveMetrics(t, "127.0.0.1:0", reg)+"/metrics")
	for _, want := range []string{`registry_requests_total{code="409",endpoint="connect"} 1`, `registry_validations_total{outcome="invalid"} 1`} {
		if !strings.Contains(text, want) {
			t.Errorf("scrape lacks %q", want)
		}
	}
	if strings.Contains(text, "e1") || strings.Contains(text, "/relay") {
		t.Error("a path component reached the metrics")
	}
}
