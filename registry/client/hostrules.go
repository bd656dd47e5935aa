package client

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// ErrAPIKeyHost is the reference's refusal of an API key for a registry host outside the
// allowed set (spec/registry-auth.md §11.2).
var ErrAPIKeyHost = errors.New("remote exec-server API-key authentication is restricted to HTTPS openai.com and openai.org hosts and subdomains or loopback hosts")

// ErrChatGPTTokenURL: --chatgpt-token-stdin requires an https registry without userinfo or
// fragment (spec/registry-auth.md §11.1 row 1c).
var ErrChatGPTTokenURL = errors.New("ChatGPT token registry URLs must use HTTPS without userinfo or fragments")

// CheckAPIKeyHost reports whether an API key may be sent to baseURL: http or https to a
// loopback host (127.0.0.0/8, ::1, localhost), or https to openai.com / openai.org or any
// subdomain (case-insensitive).
func CheckAPIKeyHost(baseURL string) error {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || u.Hostname() == "" {
		return ErrAPIKeyHost
	}
	host := strings.ToLower(u.Hostname())
	loopback := host == "localhost"
	if ip := net.ParseIP(host); ip != nil {
		loopback = ip.IsLoopback()
	}
	switch u.Scheme {
	case "http":
		if loopback {
			return nil
		}
	case "https":
		if loopback || host == "openai.com" || host == "openai.org" ||
			strings.HasSuffix(host, ".openai.com") || strings.HasSuffix(host, ".openai.org") {
			return nil
		}
	}
	return ErrAPIKeyHost
}

// CheckChatGPTTokenURL enforces the --chatgpt-token-stdin URL rule.
func CheckChatGPTTokenURL(baseURL string) error {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Fragment != "" || strings.Contains(baseURL, "#") {
		return ErrChatGPTTokenURL
	}
	return nil
}
