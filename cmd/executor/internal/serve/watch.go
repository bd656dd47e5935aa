package serve

// RemedyWSAuth is the remedy the unauthenticated-listener warning names.
const RemedyWSAuth = "--ws-auth capability-token --ws-token-sha256 <hex> (or --ws-token-file <path>)"

// warnSandboxedNetwork is the executor's ConnInfo.OnSandboxedNetworkStart hook on a
// listener without --ws-auth: it logs one warning per server (wsHandler.warned) the first
// time a client asks for a sandboxed process/start whose network is enabled, since such
// a command can itself connect to this listener and ask for an unconfined process.
// refuseSandboxedPeer stops the direct way; indirect ones (a local proxy, a passed
// descriptor) only --ws-auth stops. The executor decodes the request; the transport
// never parses messages.
func (h *wsHandler) warnSandboxedNetwork(peer string) {
	if h.warned.CompareAndSwap(false, true) {
		h.log.Warn("sandboxed process/start with network access on a WebSocket listener without auth: "+
			"the command can reach this listener; upgrades from sandboxed commands it can identify are refused, "+
			"but only listener auth keeps them from starting unconfined processes; restart with "+RemedyWSAuth,
			"component", "serve", "peer", peer)
	}
}
