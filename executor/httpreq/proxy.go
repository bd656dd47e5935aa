package httpreq

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// proxyFunc selects a proxy from the executor's environment (spec/jsonrpc.md §3.7):
// HTTP_PROXY/http_proxy for http targets, HTTPS_PROXY/https_proxy for https targets,
// ALL_PROXY/all_proxy as the fallback; NO_PROXY hosts (exact, or "*", or a ".suffix"/domain
// suffix) go direct. Unlike net/http's ProxyFromEnvironment, ALL_PROXY is honoured. Loopback
// targets go direct (documented deviation).
func proxyFunc(getenv func(string) (string, bool)) func(*http.Request) (*url.URL, error) {
	get := func(names ...string) string {
		for _, n := range names {
			if v, ok := getenv(n); ok && v != "" {
				return v
			}
		}
		return ""
	}
	return func(req *http.Request) (*url.URL, error) {
		host := req.URL.Hostname()
		if isLoopback(host) || noProxy(get("NO_PROXY", "no_proxy"), host) {
			return nil, nil
		}
		var raw string
		if req.URL.Scheme == "https" {
			raw = get("HTTPS_PROXY", "https_proxy")
		} else {
			raw = get("HTTP_PROXY", "http_proxy")
		}
		if raw == "" {
			raw = get("ALL_PROXY", "all_proxy")
		}
		if raw == "" {
			return nil, nil
		}
		if !strings.Contains(raw, "://") {
			raw = "http://" + raw
		}
		return url.Parse(raw)
	}
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func noProxy(list, host string) bool {
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		switch {
		case e == "":
		case e == "*":
			return true
		case strings.EqualFold(e, host):
			return true
		case strings.HasPrefix(e, ".") && strings.HasSuffix(strings.ToLower(host), strings.ToLower(e)):
			return true
		}
	}
	return false
}
