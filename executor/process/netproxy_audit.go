package process

// network/policyDecision audit notifications (spec/network-proxy.md §7): one record per
// final decision of a proxy started by process/start; a limited-mode block adds a
// non_domain record with the same timestamp (SOCKS5: only that one). Best effort: sent
// without waiting, dropped when the connection is short of room or none is attached.

import (
	"context"

	"github.com/execlab/executor/executor/netproxy"
)

// methodNetworkPolicyDecision is the audit notification's method.
const methodNetworkPolicyDecision = "network/policyDecision"

// policyDecisionParams is the notification's params, in the reference's member order.
type policyDecisionParams struct {
	ProcessID      string `json:"processId"`
	Timestamp      string `json:"timestamp"`
	Scope          string `json:"scope"`
	Decision       string `json:"decision"`
	Source         string `json:"source"`
	Reason         string `json:"reason"`
	Protocol       string `json:"protocol"`
	Host           string `json:"host"`
	Port           uint16 `json:"port"`
	Method         string `json:"method,omitempty"`
	Client         string `json:"client,omitempty"`
	PolicyOverride bool   `json:"policyOverride"`
}

// auditTimeFormat is RFC 3339 UTC with milliseconds and a Z suffix.
const auditTimeFormat = "2006-01-02T15:04:05.000Z"

// auditFunc returns the netproxy audit hook of process id.
func (m *Manager) auditFunc(id string) func(netproxy.AuditRecord) {
	return func(rec netproxy.AuditRecord) {
		base := policyDecisionParams{
			ProcessID: id,
			Timestamp: rec.Time.UTC().Format(auditTimeFormat),
			Protocol:  string(rec.Request.Protocol),
			Host:      netproxy.NormalizeHost(rec.Request.Host),
			Port:      rec.Request.Port,
			Method:    rec.Request.Method,
			Client:    rec.Client,
		}
		d := rec.Decision
		isSOCKS := rec.Request.Protocol == netproxy.ProtocolSOCKS5TCP || rec.Request.Protocol == netproxy.ProtocolSOCKS5UDP
		if !(d.ModeGuard && isSOCKS) {
			dom := base
			dom.Scope, dom.Source = "domain", string(netproxy.SourceBaselinePolicy)
			switch {
			case d.Override: // the decider allowed (the mode guard may block after it)
				dom.Decision, dom.Source, dom.Reason = "allow", string(netproxy.SourceDecider), string(netproxy.ReasonNotAllowed)
				dom.PolicyOverride = true
			case d.Allowed || d.ModeGuard:
				dom.Decision, dom.Reason = "allow", string(netproxy.ReasonAllow)
			case d.Ask:
				dom.Decision, dom.Source, dom.Reason = "ask", string(d.Source), string(d.Reason)
			default:
				dom.Decision, dom.Source, dom.Reason = "deny", string(d.Source), string(d.Reason)
			}
			m.notifyBestEffort(methodNetworkPolicyDecision, &dom)
		}
		if d.ModeGuard {
			nd := base
			nd.Scope, nd.Decision, nd.Source, nd.Reason = "non_domain", "deny", string(d.Source), string(d.Reason)
			m.notifyBestEffort(methodNetworkPolicyDecision, &nd)
		}
	}
}

// bestEffortNotifier is implemented by jsonrpc.Conn (NotifyBestEffort: never waits,
// dropped unless jsonrpc.BestEffortReserve outbound slots stay free).
type bestEffortNotifier interface {
	NotifyBestEffort(method string, params any) error
}

// notifyBestEffort sends a notification without ever waiting: dropped when nothing is
// attached or the connection is short of room.
func (m *Manager) notifyBestEffort(method string, params any) {
	a := m.attached.Load()
	if a == nil {
		return
	}
	if t, ok := a.n.(bestEffortNotifier); ok {
		if err := t.NotifyBestEffort(method, params); err != nil {
			m.log.Debug("best-effort notification dropped", "method", method, "error", err)
		}
		return
	}
	// Other notifiers (tests): a cancelled ctx makes Notify give up instead of waiting.
	ctx, cancel := context.WithCancel(a.ctx)
	cancel()
	_ = a.n.Notify(ctx, method, params)
}
