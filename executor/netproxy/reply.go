package netproxy

// Replies the proxy writes itself (spec/network-proxy.md §5.3, probed on codex 0.171.0):
//
//	HTTP/1.1 403 Forbidden
//	content-type: application/json
//	x-proxy-error: blocked-by-allowlist
//	content-length: 211
//	date: Sat, 05 Dec 2026 14:36:33 GMT
//
//	{"status":"blocked","host":…,"reason":…,"decision":"deny","source":…,"protocol":…,"port":…,"message":…}

import (
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Reply texts (§5.3).
const (
	msgNotAllowed      = "Domain not in allowlist."
	msgNotAllowedLocal = "Sandbox policy blocks local/private network addresses."
	msgDenied          = "Domain denied by the sandbox policy."
	msgByPolicy        = "Request blocked by network policy."
	msgMethodLimited   = "Method not allowed in limited mode."
	msgMITMRequired    = "MITM required for limited HTTPS."
)

// blockedBody is the JSON body of a 403, in the reference's key order.
type blockedBody struct {
	Status   string `json:"status"`
	Host     string `json:"host"`
	Reason   Reason `json:"reason"`
	Decision string `json:"decision"`
	Source   Source `json:"source"`
	Protocol string `json:"protocol"`
	Port     uint16 `json:"port"`
	Message  string `json:"message"`
}

// proxyError returns the x-proxy-error header and message of a blocked decision.
func proxyError(d Decision) (header, message string) {
	if d.ByClient {
		return "blocked-by-policy", msgByPolicy
	}
	switch d.Reason {
	case ReasonDenied:
		return "blocked-by-denylist", msgDenied
	case ReasonNotAllowed:
		return "blocked-by-allowlist", msgNotAllowed
	case ReasonNotAllowedLocal:
		return "blocked-by-allowlist", msgNotAllowedLocal
	case ReasonMethodNotAllowed:
		return "blocked-by-method-policy", msgMethodLimited
	case ReasonMITMRequired:
		return "blocked-by-mitm-required", msgMITMRequired
	}
	return "blocked-by-policy", msgByPolicy
}

// writeBlocked writes the 403 of a blocked decision for r.
func writeBlocked(c net.Conn, r Request, d Decision, wantsClose bool) {
	header, message := proxyError(d)
	if d.Reason == ReasonMITMRequired {
		writeReply(c, 403, "text/plain", header, message, wantsClose)
		return
	}
	decision := "deny"
	if d.Ask {
		decision = "ask"
	}
	body, _ := json.Marshal(blockedBody{
		Status: "blocked", Host: NormalizeHost(r.Host), Reason: d.Reason, Decision: decision, Source: d.Source,
		Protocol: string(r.Protocol), Port: r.Port, Message: message,
	})
	writeReply(c, 403, "application/json", header, string(body), wantsClose)
}

// writeReply writes a complete response: content-type (if any), x-proxy-error (if any),
// connection: close (when the request asked for it, or it could not be parsed),
// content-length, date.
func writeReply(c net.Conn, status int, contentType, proxyErr, body string, wantsClose bool) {
	var b strings.Builder
	b.WriteString("HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n")
	if contentType != "" {
		b.WriteString("content-type: " + contentType + "\r\n")
	}
	if proxyErr != "" {
		b.WriteString("x-proxy-error: " + proxyErr + "\r\n")
	}
	if wantsClose {
		b.WriteString("connection: close\r\n")
	}
	b.WriteString("content-length: " + strconv.Itoa(len(body)) + "\r\n")
	b.WriteString("date: " + httpDate() + "\r\n\r\n")
	b.WriteString(body)
	_ = c.SetWriteDeadline(time.Now().Add(headTimeout))
	_, _ = c.Write([]byte(b.String()))
}

func httpDate() string { return time.Now().UTC().Format(http.TimeFormat) }
