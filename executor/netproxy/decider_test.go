package netproxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/execlab/executor/executor/netproxy"
)

// TestParseVerdict pins the decision shapes of network/policyRequest (spec/network-proxy.md
// §6, probed on codex 0.171.0 through test/conformance netproxy_policy_callbacks).
func TestParseVerdict(t *testing.T) {
	long := strings.Repeat("x", netproxy.MaxVerdictReasonBytes)
	for _, tc := range []struct {
		raw  string
		want netproxy.Verdict
		ok   bool
	}{
		{`{"decision":{"type":"allow"}}`, netproxy.Verdict{Kind: netproxy.VerdictAllow}, true},
		{`{"decision":{"type":"allow","reason":5},"x":1}`, netproxy.Verdict{Kind: netproxy.VerdictAllow}, false},
		{`{"decision":{"type":"deny","reason":"no"}}`, netproxy.Verdict{Kind: netproxy.VerdictDeny, Reason: "no"}, true},
		{`{"decision":{"type":"ask","reason":"hm"}}`, netproxy.Verdict{Kind: netproxy.VerdictAsk, Reason: "hm"}, true},
		{`{"decision":{"type":"deny","reason":"` + long + `"}}`, netproxy.Verdict{Kind: netproxy.VerdictDeny, Reason: long}, true},
		{`{"decision":{"type":"deny","reason":"` + long + `y"}}`, netproxy.Verdict{}, false},
		{`{"decision":{"type":"deny","reason":"a\nb"}}`, netproxy.Verdict{}, false},
		{`{"decision":{"type":"deny"}}`, netproxy.Verdict{}, false},
		{`{"decision":{"type":"maybe"}}`, netproxy.Verdict{}, false},
		{`{"decision":{"type":"Allow"}}`, netproxy.Verdict{}, false},
		{`{}`, netproxy.Verdict{}, false},
		{`null`, netproxy.Verdict{}, false},
		{`[]`, netproxy.Verdict{}, false},
		{`{"decision":"allow"}`, netproxy.Verdict{}, false},
	} {
		got, err := netproxy.ParseVerdict(json.RawMessage(tc.raw))
		if tc.ok != (err == nil) || (tc.ok && got != tc.want) {
			t.Errorf("ParseVerdict(%.60s) = %+v, %v; want %+v, ok=%v", tc.raw, got, err, tc.want, tc.ok)
		}
	}
}

// FuzzParseVerdict: never panics; an accepted verdict has a known kind and a bounded,
// printable reason.
func FuzzParseVerdict(f *testing.F) {
	for _, s := range []string{`{"decision":{"type":"allow"}}`, `{"decision":{"type":"deny","reason":"r"}}`,
		`{"decision":{"type":"ask","reason":"\u0007"}}`, `{}`, `{"decision":null}`, `[1]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := netproxy.ParseVerdict(raw)
		if err != nil {
			return
		}
		switch v.Kind {
		case netproxy.VerdictAllow:
			if v.Reason != "" {
				t.Fatalf("allow with reason %q", v.Reason)
			}
		case netproxy.VerdictDeny, netproxy.VerdictAsk:
			if len(v.Reason) > netproxy.MaxVerdictReasonBytes || strings.ContainsAny(v.Reason, "\x00\n\r\t\x7f") {
				t.Fatalf("accepted reason %q", v.Reason)
			}
		default:
			t.Fatalf("kind %q", v.Kind)
		}
	})
}

// TestDecider_FailsClosed: a decider that errors, never answers (until Close), or
// answers malformed denies not_allowed from the decider; Close ends a pending call.
func TestDecider_FailsClosed(t *testing.T) {
	pol := checkedPolicy(t, `{"proxy":{"enabled":true,"enableSocks5":false,"enableSocks5Udp":false,"allowUpstreamProxy":false,"dangerouslyAllowAllUnixSockets":false,"mode":"full","allowLocalBinding":true,"domains":{"localhost":"allow"}},"policyDecisionTimeoutMs":60000}`)
	var mu sync.Mutex
	var recs []netproxy.AuditRecord
	asked := make(chan struct{}, 4)
	px, err := netproxy.Start(pol, &netproxy.Options{
		Audit: func(r netproxy.AuditRecord) { mu.Lock(); recs = append(recs, r); mu.Unlock() },
		Decider: func(ctx context.Context, r netproxy.Request) (json.RawMessage, error) {
			asked <- struct{}{}
			switch r.Host {
			case "err.localhost":
				return nil, errors.New("transport gone")
			case "bad.localhost":
				return json.RawMessage(`{"decision":{"type":"maybe"}}`), nil
			}
			<-ctx.Done() // hang.localhost: until Close
			return nil, ctx.Err()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	_ = pol
	for _, host := range []string{"err.localhost", "bad.localhost"} {
		code, body := proxyGet(t, px.HTTPAddr(), host)
		if code != 403 || !strings.Contains(body, `"reason":"not_allowed","decision":"deny","source":"decider"`) {
			t.Errorf("%s: %d %s", host, code, body)
		}
	}
	done := make(chan int, 1)
	go func() { code, _ := proxyGet(t, px.HTTPAddr(), "hang.localhost"); done <- code }()
	select {
	case <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("decider never asked")
	}
	for len(asked) > 0 {
		<-asked
	}
	px.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("pending decision not ended by Close")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range recs {
		if r.Decision.Allowed || r.Decision.Source != netproxy.SourceDecider || r.Decision.Reason != netproxy.ReasonNotAllowed {
			t.Errorf("record %+v", r)
		}
	}
}

func proxyGet(t *testing.T, proxyAddr, host string) (int, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", proxyAddr, 5*time.Second)
	if err != nil {
		return 0, err.Error()
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, "GET http://"+host+":1/ HTTP/1.1\r\nHost: "+host+":1\r\n\r\n"); err != nil {
		return 0, err.Error()
	}
	b, _ := io.ReadAll(c)
	s := string(b)
	code := 0
	if strings.HasPrefix(s, "HTTP/1.1 ") && len(s) >= 12 {
		code = atoi(s[9:12])
	}
	_, body, _ := strings.Cut(s, "\r\n\r\n")
	return code, body
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
