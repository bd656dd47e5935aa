package process

import (
	"github.com/execlab/executor/executor/netproxy"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
)

// errProxyUnsupported is the fail-closed answer to a valid networkProxy while this
// executor advertises networkProxyLaunch: false (spec/network-proxy.md §0 item 4): a
// command is never run without the proxy its client asked for.
var errProxyUnsupported = jsonwire.InvalidParams("network proxy launch is unsupported on this executor")

// checkNetworkProxy runs spec/network-proxy.md §2.2 steps 1–6 for one process/start:
// managedNetwork is decoded (its serde errors first), then networkProxy; then
// managedNetwork.transparentTcp is refused unless proxy.transparentTcp is set; then the
// proxy's own checks (netproxy.LaunchConfig.Check). It returns nil when the request has
// no networkProxy.
func checkNetworkProxy(params *protocol.ProcessStartParams) (*netproxy.Policy, error) {
	var mn managedNetworkParams
	if present(params.ManagedNetwork) {
		if err := jsonwire.UnmarshalParams(params.ManagedNetwork, &mn); err != nil {
			return nil, err
		}
	}
	cfg, err := netproxy.Decode(params.NetworkProxy)
	if err != nil {
		return nil, err
	}
	if mn.TransparentTcp && !cfg.TransparentTCP() {
		return nil, errTransparentTCP
	}
	if cfg == nil {
		return nil, nil
	}
	return cfg.Check(params.ProcessID, params.Sandbox != nil)
}
