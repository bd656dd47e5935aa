package netproxy_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"testing"

	"github.com/execlab/executor/executor/netproxy"
)

// Resolution failures as 0.171.0 answers them (probed with an allowlisted name that does
// not resolve): without allowLocalBinding the resolution check is part of the decision
// (one deny not_allowed_local record, HTTP 403, SOCKS5 reply 2); with it a name that does
// not resolve is an upstream failure after one allow record (HTTP 502 "upstream
// failure", SOCKS5 reply 5).
func TestProxy_UnresolvableAllowedName(t *testing.T) {
	_, port := upstream(t)
	for _, tt := range []struct {
		allowLocal bool
		status     int
		rep        byte
		audit      string
	}{
		{false, 403, 2, "[http:not_allowed_local socks5_tcp:not_allowed_local]"},
		{true, 502, 5, "[http:allow socks5_tcp:allow]"},
	} {
		t.Run(fmt.Sprintf("allowLocalBinding=%v", tt.allowLocal), func(t *testing.T) {
			log := &auditLog{}
			px, err := netproxy.Start(policy(t, "full", tt.allowLocal, `"domains":{"nx.example":"allow"}`), &netproxy.Options{Audit: log.add,
				Resolve: func(context.Context, string) ([]netip.Addr, error) { return nil, errors.New("no such host") }})
			if err != nil {
				t.Fatal(err)
			}
			defer px.Close()
			res, err := proxiedClient(px).Get("http://nx.example:" + port + "/")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != tt.status {
				t.Errorf("HTTP: %d %q, want %d", res.StatusCode, body, tt.status)
			}
			if rep := socksConnect(t, px.SOCKSAddr(), "nx.example", port); rep != tt.rep {
				t.Errorf("SOCKS5: reply %d, want %d", rep, tt.rep)
			}
			if got := fmt.Sprint(log.reasons()); got != tt.audit {
				t.Errorf("audit %s, want %s", got, tt.audit)
			}
		})
	}
}
