package netproxy

// The child's proxy environment (spec/network-proxy.md §4, probed on codex 0.171.0).

// httpProxyVars are set to the HTTP listener's URL.
var httpProxyVars = []string{
	"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy",
	"WS_PROXY", "WSS_PROXY", "ws_proxy", "wss_proxy",
	"YARN_HTTP_PROXY", "YARN_HTTPS_PROXY",
	"NPM_CONFIG_HTTP_PROXY", "NPM_CONFIG_HTTPS_PROXY", "NPM_CONFIG_PROXY",
	"npm_config_http_proxy", "npm_config_https_proxy", "npm_config_proxy",
	"BUNDLE_HTTP_PROXY", "BUNDLE_HTTPS_PROXY", "PIP_PROXY",
	"DOCKER_HTTP_PROXY", "DOCKER_HTTPS_PROXY",
}

// allProxyVars are set to the SOCKS5 listener's URL when it runs, else the HTTP one.
var allProxyVars = []string{"ALL_PROXY", "all_proxy", "FTP_PROXY", "ftp_proxy"}

// noProxyVars are empty, or localLinkRanges when local binding is allowed.
var noProxyVars = []string{"NO_PROXY", "no_proxy", "NPM_CONFIG_NOPROXY", "npm_config_noproxy", "BUNDLE_NO_PROXY"}

// localNoProxy is NO_PROXY with allowLocalBinding: loopback and the private ranges.
const localNoProxy = "localhost,127.0.0.1,::1,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16"

// EnvVar is one variable of the child's environment.
type EnvVar struct{ Name, Value string }

// Env returns the variables that overwrite the child's environment for a proxy whose
// HTTP listener is httpAddr and SOCKS5 listener socksAddr ("" when SOCKS5 is off), both
// host:port. Every variable is set, whatever the client sent (§4); others are kept.
func Env(httpAddr, socksAddr string, allowLocalBinding bool) []EnvVar {
	h := "http://" + httpAddr
	s := h
	if socksAddr != "" {
		s = "socks5h://" + socksAddr
	}
	noProxy, local := "", "0"
	if allowLocalBinding {
		noProxy, local = localNoProxy, "1"
	}
	out := make([]EnvVar, 0, len(httpProxyVars)+len(allProxyVars)+len(noProxyVars)+4)
	for _, n := range httpProxyVars {
		out = append(out, EnvVar{n, h})
	}
	for _, n := range allProxyVars {
		out = append(out, EnvVar{n, s})
	}
	for _, n := range noProxyVars {
		out = append(out, EnvVar{n, noProxy})
	}
	return append(out,
		EnvVar{"CODEX_NETWORK_PROXY_ACTIVE", "1"},
		EnvVar{"CODEX_NETWORK_ALLOW_LOCAL_BINDING", local},
		EnvVar{"NODE_USE_ENV_PROXY", "1"},
		EnvVar{"ELECTRON_GET_USE_PROXY", "true"},
	)
}
