package bench

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/execlab/executor/executor/netproxy"
)

// TestOpenTunnel_ThroughProxy: openTunnel returns a tunnel to the greeter once its byte
// has arrived, and fails on a refusal instead of timing it.
func TestOpenTunnel_ThroughProxy(t *testing.T) {
	e := &Env{}
	defer e.close()
	g, err := e.greeterFor()
	if err != nil {
		t.Fatal(err)
	}
	start := func(domains string) *netproxy.Proxy {
		raw := strings.Replace(string(proxyConfig), `"domains":{"localhost":"allow"}`, `"domains":`+domains, 1)
		return startProxy(t, json.RawMessage(raw))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	allowed := start(`{"localhost":"allow"}`)
	c, err := openTunnel(ctx, allowed.HTTPAddr(), g.port)
	if err != nil {
		t.Fatalf("tunnel through an allowing proxy: %v", err)
	}
	// The tunnel stays open end to end: what the bench writes reaches the greeter, which
	// keeps the connection (no EOF).
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Errorf("writing through the tunnel: %v", err)
	}
	c.Close()

	denied := start(`{"other.test":"allow"}`)
	if c, err := openTunnel(ctx, denied.HTTPAddr(), g.port); err == nil {
		c.Close()
		t.Fatal("got a tunnel through a proxy that does not allow localhost, want an error")
	} else if !strings.Contains(err.Error(), "want 200") {
		t.Errorf("got %v, want the refusal's status reported", err)
	}
}

// TestProxyRows_Quick runs the proxy rows on both executors with --quick sizes and one
// sample: each must produce a positive number per side with every byte verified (a lost
// or wrong byte fails the row). No timing assertions.
func TestProxyRows_Quick(t *testing.T) {
	ours, ref := targets(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{Ours: ours, Reference: ref, Quick: true, Runs: 1,
		Only: []string{"proxy_cpu,proxy_setup,proxy_idle_memory"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 3 {
		t.Fatalf("got %d rows, want 3", len(rep.Rows))
	}
	for _, row := range rep.Rows {
		if row.Status != StatusOK {
			t.Errorf("%s: status %q (%s), want ok", row.Row, row.Status, row.Error)
			continue
		}
		for side, st := range map[string]*Stats{"ours": row.Ours, "reference": row.Reference} {
			// proxy_cpu at 16 MiB can round to zero ticks (10 ms = 0.64 CPU-s/GiB).
			if st == nil || st.Median < 0 || (row.Row != "proxy_cpu" && st.Median == 0) {
				t.Errorf("%s %s: got %+v, want a positive median", row.Row, side, st)
			}
		}
	}
}
