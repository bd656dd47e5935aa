//go:build linux

package interop_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/execlab/executor/internal/refbin"
)

// TestRegistry_ExecTraced: `executor exec` with tracing on (OTEL_* set) sends a traceparent
// on connect and on the upgrade, and in the cleartext field 11 of its handshake frame,
// which the rendezvous forwards to the executor as is. A released executor (which decodes
// and discards field 11) completes the handshake and runs the command as without tracing;
// the harness's spans reach the OTLP/HTTP endpoint.
func TestRegistry_ExecTraced(t *testing.T) {
	forEachExecutor(t, func(t *testing.T, ref *refbin.Release) {
		var exports atomic.Int32
		sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			if r.URL.Path == "/v1/traces" {
				exports.Add(1)
			}
		}))
		defer sink.Close()
		reg := startOurRegistry(t)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		startOnlineExecutor(t, ctx, ref, reg, "env-traced")
		cmd := exec.CommandContext(ctx, oursBinary(t), "exec", "--registry", reg.URL, "--environment-id", "env-traced",
			"--token-file", reg.TokenFile, "--", "sh", "-c", "echo hello; exit 3")
		cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="+sink.URL+"/v1/traces")
		var out, errBuf strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errBuf
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("running executor exec: %v (stderr %s)", err, errBuf.String())
		}
		if out.String() != "hello\n" || code != 3 {
			t.Errorf("traced executor exec: got stdout %q exit %d (stderr %q), want %q exit 3", out.String(), code, errBuf.String(), "hello\n")
		}
		if exports.Load() == 0 {
			t.Errorf("executor exec exported no spans with OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set")
		}
	})
}
