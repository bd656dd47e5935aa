package process

// The executor-local network proxy of process/start (spec/network-proxy.md): checking
// networkProxy in the reference's order, starting the per-process proxy before the spawn,
// and closing it when the process becomes closed (exit plus both stream EOFs) or was
// killed and has exited (§3).

import (
	"maps"
	"strconv"
	"strings"

	"github.com/execlab/executor/executor/netproxy"
	"github.com/execlab/executor/executor/netproxy/credmask"
	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"github.com/execlab/executor/sandbox"
)

// errProxyUnsupported is the fail-closed answer to a networkProxy this executor cannot
// honour in full (spec/network-proxy.md §0 item 4): a command is never run without the
// proxy its client asked for, nor with a weaker one.
var errProxyUnsupported = jsonwire.InvalidParams("network proxy launch is unsupported on this executor")

// proxyLaunch is a checked networkProxy.
type proxyLaunch struct {
	cfg *netproxy.LaunchConfig
	pol *netproxy.Policy
}

// checkNetworkProxy runs spec/network-proxy.md §2.2 steps 1–6 for one process/start:
// managedNetwork is decoded (its serde errors first), then networkProxy; then
// managedNetwork.transparentTcp is refused unless proxy.transparentTcp is set; then the
// proxy's own checks (netproxy.LaunchConfig.Check). It returns nil when the request has
// no networkProxy.
func checkNetworkProxy(params *protocol.ProcessStartParams) (*proxyLaunch, error) {
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
	pol, err := cfg.Check(params.ProcessID, params.Sandbox != nil)
	if err != nil {
		return nil, err
	}
	return &proxyLaunch{cfg: cfg, pol: pol}, nil
}

// supported refuses (fail closed) what is not implemented: credential masking (§9)
// when the Manager has no interception CA (Options.CredentialCA). Everything else is
// honoured: credential masking (credmask, netproxy's interception), policy callbacks
// (§6), a sandbox with enforceManagedNetwork, whose only route out is the
// managed-network bridge to this proxy (§8.1, wrapSandbox; without bubblewrap the
// launcher refuses), and transparent TCP there (§8.3: the sandbox captures direct
// connections into this proxy's SOCKS5 listener, sandbox/transparent).
func (l *proxyLaunch) supported(haveCA bool) error {
	if l == nil {
		return nil
	}
	if l.cfg.Proxy.CredentialMasking && !haveCA {
		return errProxyUnsupported
	}
	return nil
}

// proxyHandle is a started proxy on its way to its process. Until adopt hands it to the
// process's watcher, the start path owns it and closeIfOrphaned closes it.
type proxyHandle struct {
	px          *netproxy.Proxy
	owned       bool
	transparent bool // proxy.transparentTcp (checked: a sandbox and SOCKS5)
}

// transparentTCP reports whether h's launch asked for transparent TCP.
func (h *proxyHandle) transparentTCP() bool { return h != nil && h.transparent }

// startProxy starts l's proxy for process id and overwrites the child's proxy variables in env (§4).
// With credentialMasking it then masks env for argv (the request's argv, before any
// snapshot wrapping: credmask.Prepare, §9.2) and gives the proxy the broker that swaps
// the dummies back (§9.3). It returns nil when l is nil.
func (m *Manager) startProxy(l *proxyLaunch, argv []string, id string, env map[string]string) (*proxyHandle, error) {
	if l == nil {
		return nil, nil
	}
	o := &netproxy.Options{Log: m.log, Audit: m.auditFunc(id), Decider: m.deciderFunc(id), UpstreamRoots: m.opts.UpstreamRoots,
		TCPUpstream: m.opts.TCPUpstreamProxy}
	if l.cfg.Proxy.CredentialMasking {
		ca, err := m.opts.CredentialCA()
		if err != nil {
			m.log.Debug("credential masking CA unavailable", "error", err)
			return nil, jsonwire.Internal("failed to start network proxy: %s", err.Error())
		}
		o.CA = ca
	}
	px, err := netproxy.Start(l.pol, o)
	if err != nil {
		m.log.Debug("network proxy start failed", "error", err)
		return nil, jsonwire.Internal("failed to start network proxy: %s", err.Error())
	}
	for _, v := range px.Env() {
		env[v.Name] = v.Value
	}
	if o.CA != nil {
		prep, err := credmask.Prepare(argv, env, &credmask.Config{
			Masking: true, Providers: l.cfg.Proxy.CredentialProviders, AllowLocalBinding: l.cfg.Proxy.AllowLocalBinding,
			Registry:     &m.creds,
			CABundlePath: o.CA.TrustBundlePath(), Logger: m.log,
		})
		if err != nil {
			px.Close()
			m.log.Debug("credential masking failed", "error", err)
			return nil, jsonwire.Internal("failed to start network proxy: %s", err.Error())
		}
		clear(env)
		maps.Copy(env, prep.Env)
		px.SetBroker(prep.Broker)
	}
	return &proxyHandle{px: px, transparent: l.cfg.Proxy.TransparentTCP}, nil
}

// closeIfOrphaned closes the proxy of a start that failed after starting it.
func (h *proxyHandle) closeIfOrphaned() {
	if h != nil && !h.owned {
		h.px.Close()
	}
}

// adoptProxy hands h to p: a routine closes the proxy once p is closed, or has exited
// after a kill (terminate, Manager.Close). m.mu must be held with !m.closing, as for
// the other routines start adds to m.wg.
func (m *Manager) adoptProxy(h *proxyHandle, p *proc) {
	if h == nil {
		return
	}
	h.owned = true
	m.wg.Add(1)
	go m.routineProxy(p, h.px)
}

// routineProxy waits for p's end of life, then closes px (§3 lifetime).
func (m *Manager) routineProxy(p *proc, px *netproxy.Proxy) {
	defer m.wg.Done()
	defer px.Close()
	p.mu.Lock()
	for !p.closed && !(p.killed && p.exited) {
		wake := p.waitChanLocked()
		p.mu.Unlock()
		<-wake
		p.mu.Lock()
	}
	p.mu.Unlock()
	m.log.Debug("network proxy closed", "process_id", p.id)
}

// managedNetwork derives the sandbox's managed network from the proxy's listeners
// (spec/network-proxy.md §8.1): the client's managedNetwork (nil: defaults) with its
// loopbackPorts replaced by the proxy's HTTP and SOCKS5 ports, so a client value such as
// [1] neither widens nor breaks the route, and transparentTcp from the proxy (§8.3).
func (h *proxyHandle) managedNetwork(client *sandbox.ManagedNetwork) *sandbox.ManagedNetwork {
	mn := sandbox.ManagedNetwork{}
	if client != nil {
		mn = *client
	}
	mn.LoopbackPorts = nil
	mn.TransparentTcp = h.transparent
	for _, addr := range []string{h.px.HTTPAddr(), h.px.SOCKSAddr()} {
		if port, ok := listenerPort(addr); ok {
			mn.LoopbackPorts = append(mn.LoopbackPorts, port)
		}
	}
	return &mn
}

// listenerPort is the port of a host:port listener address.
func listenerPort(addr string) (uint16, bool) {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return 0, false
	}
	n, err := strconv.ParseUint(addr[i+1:], 10, 16)
	return uint16(n), err == nil && n != 0
}
