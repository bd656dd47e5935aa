package process

// network/policyRequest (spec/network-proxy.md §6): the server→client request a
// process's proxy sends, when policyDecisionTimeoutMs is set, for a request the baseline
// policy refuses as not_allowed. The call goes through Options.Client (the session's
// jsonrpc.ClientLink, which follows the attached connection); netproxy bounds it by the
// timeout plus 5 s, cancels it when the proxy closes, and maps every failure to deny.

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/execlab/executor/executor/netproxy"
)

// methodNetworkPolicyRequest is the decision callback's method.
const methodNetworkPolicyRequest = "network/policyRequest"

// ClientCaller sends a server→client request and waits for its result (implemented by
// jsonrpc.ClientLink and jsonrpc.Conn; defined here so this package needs no layer
// above it). It must return when ctx ends.
type ClientCaller interface {
	Call(ctx context.Context, method string, params any) (json.RawMessage, error)
}

// policyRequestParams is network/policyRequest's params, in the reference's order.
type policyRequestParams struct {
	ProcessID string               `json:"processId"`
	Request   policyRequestRequest `json:"request"`
}

type policyRequestRequest struct {
	Protocol string `json:"protocol"`
	Host     string `json:"host"`
	Port     uint16 `json:"port"`
}

var errNoDecisionClient = errors.New("no client to ask for a network policy decision")

// deciderFunc returns the netproxy decider of process id.
func (m *Manager) deciderFunc(id string) netproxy.Decider {
	return func(ctx context.Context, r netproxy.Request) (json.RawMessage, error) {
		if m.opts.Client == nil {
			return nil, errNoDecisionClient
		}
		return m.opts.Client.Call(ctx, methodNetworkPolicyRequest, &policyRequestParams{
			ProcessID: id,
			Request:   policyRequestRequest{Protocol: string(r.Protocol), Host: r.Host, Port: r.Port},
		})
	}
}
