package httpreq_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/execlab/executor/executor/httpreq"
	"github.com/execlab/executor/executor/protocol"
)

// credentialHeaders are the headers a redirect to another origin must drop, each with the
// value it is sent with; x-keep is an ordinary header that every hop keeps.
var credentialHeaders = []protocol.HTTPHeader{
	{Name: "Authorization", Value: "Bearer direct"},
	{Name: "Proxy-Authorization", Value: "Basic eA=="},
	{Name: "Cookie", Value: "a=1"},
	{Name: "Cookie2", Value: "b=2"},
	{Name: "WWW-Authenticate", Value: "w"},
	{Name: "X-Keep", Value: "k"},
}

// seen reports, as "name=value" lines in credentialHeaders order, which of those headers
// a request carried.
func seen(r *http.Request) string {
	var b strings.Builder
	for _, h := range credentialHeaders {
		if v, ok := r.Header[http.CanonicalHeaderKey(h.Name)]; ok {
			fmt.Fprintf(&b, "%s=%s\n", http.CanonicalHeaderKey(h.Name), strings.Join(v, ","))
		}
	}
	return b.String()
}

// TestRequest_RedirectDropsCredentialsAcrossOrigins runs two real servers on 127.0.0.1
// (different ports). A redirect to the other port, or to another host on the same port,
// must not deliver Authorization, Proxy-Authorization, Cookie, Cookie2 or WWW-Authenticate,
// given directly or built from valueEnvVar, and they stay dropped when the chain comes back;
// a same-origin redirect keeps them, as codex 0.171.0 does (conformance scenario
// http_redirect_credentials). Before the fix, every case delivered them.
func TestRequest_RedirectDropsCredentialsAcrossOrigins(t *testing.T) {
	var p1URL string // set once p1 listens
	p2 := http.NewServeMux()
	p2.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, seen(r)) })
	p2.HandleFunc("/back", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, p1URL+"/echo", http.StatusFound)
	})
	s2 := httptest.NewServer(p2)
	defer s2.Close()
	p1 := http.NewServeMux()
	p1.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, seen(r)) })
	p1.HandleFunc("/same", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/echo", http.StatusFound) })
	p1.HandleFunc("/port", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, s2.URL+"/echo", http.StatusFound)
	})
	p1.HandleFunc("/port-and-back", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, s2.URL+"/back", http.StatusFound)
	})
	p1.HandleFunc("/host", func(w http.ResponseWriter, r *http.Request) {
		_, port, _ := strings.Cut(r.Host, ":")
		http.Redirect(w, r, "http://localhost:"+port+"/echo", http.StatusFound)
	})
	s1 := httptest.NewServer(p1)
	defer s1.Close()
	p1URL = s1.URL

	const all = "Authorization=Bearer direct\nProxy-Authorization=Basic eA==\nCookie=a=1\nCookie2=b=2\nWww-Authenticate=w\nX-Keep=k\n"
	const allEnv = "Authorization=Bearer from-env\nProxy-Authorization=Basic eA==\nCookie=a=1\nCookie2=b=2\nWww-Authenticate=w\nX-Keep=k\n"
	const kept = "X-Keep=k\n"
	viaEnv := append([]protocol.HTTPHeader(nil), credentialHeaders...)
	viaEnv[0] = protocol.HTTPHeader{Name: "authorization", Value: "Bearer ", ValueEnvVar: ptr("GITHUB_TOKEN")}
	c, _ := newClient(t, map[string]string{"GITHUB_TOKEN": "from-env"})
	tests := []struct {
		name    string
		path    string
		headers []protocol.HTTPHeader
		want    string
	}{
		{"no redirect", "/echo", credentialHeaders, all},
		{"same origin", "/same", credentialHeaders, all},
		{"same origin valueEnvVar", "/same", viaEnv, allEnv},
		{"other port", "/port", credentialHeaders, kept},
		{"other port valueEnvVar", "/port", viaEnv, kept},
		{"other host", "/host", credentialHeaders, kept},
		{"other port and back", "/port-and-back", viaEnv, kept},
	}
	for _, tt := range tests {
		res, err := c.Request(ctx, &protocol.HTTPRequestParams{Method: "GET", URL: s1.URL + tt.path, RequestID: "r", Headers: tt.headers})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		r := res.(*protocol.HTTPRequestResult)
		body, _ := base64.StdEncoding.DecodeString(r.BodyBase64)
		if r.Status != 200 || string(body) != tt.want {
			t.Errorf("%s: status %d, the last hop received\n%s\nwant\n%s", tt.name, r.Status, body, tt.want)
		}
	}
}

// TestLeftOrigin pins the origin comparison: scheme, host (case-insensitively) and port,
// a missing port being the scheme's default, over the whole chain.
func TestLeftOrigin(t *testing.T) {
	tests := []struct {
		chain []string
		want  bool
	}{
		{[]string{"http://a.test/x", "http://a.test/y"}, false},
		{[]string{"http://a.test/x", "http://A.TEST:80/y"}, false},
		{[]string{"https://a.test/x", "https://a.test:443/y"}, false},
		{[]string{"http://[::1]:8080/", "http://[::1]:8080/y"}, false},
		{[]string{"http://a.test:8080/", "https://a.test:8080/"}, true}, // scheme only
		{[]string{"http://a.test/", "https://a.test/"}, true},
		{[]string{"http://a.test/", "http://a.test:8080/"}, true},
		{[]string{"http://a.test/", "http://sub.a.test/"}, true}, // net/http alone keeps these
		{[]string{"http://a.test/", "http://b.test/", "http://a.test/"}, true},
		{[]string{"http://a.test/", "http://a.test/1", "http://a.test/2"}, false},
	}
	for _, tt := range tests {
		if got := httpreq.LeftOriginForTest(tt.chain...); got != tt.want {
			t.Errorf("%v: left origin %v, want %v", tt.chain, got, tt.want)
		}
	}
}
