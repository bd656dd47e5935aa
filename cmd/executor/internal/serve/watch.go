package serve

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/execlab/executor/executor/jsonrpc"
	"github.com/execlab/executor/sandbox/policy"
)

// RemedyWSAuth is the remedy the unauthenticated-listener warning names.
const RemedyWSAuth = "--ws-auth capability-token --ws-token-sha256 <hex> (or --ws-token-file <path>)"

// watchConn passes messages through unchanged and, on a listener without --ws-auth,
// logs one warning per server (wsHandler.warned) the first time a client asks for a
// sandboxed process/start whose network is enabled: such a command can itself connect
// to this listener and ask for an unconfined process. refuseSandboxedPeer stops the
// direct way; indirect ones (a local proxy, a passed descriptor) only --ws-auth stops.
// Once the warning is logged the wrapper only forwards.
type watchConn struct {
	jsonrpc.MessageConn
	h    *wsHandler
	peer string
}

var (
	markStart   = []byte(`"process/start"`)
	markEnabled = []byte(`"enabled"`)
)

func (c *watchConn) ReadMessage(ctx context.Context) ([]byte, error) {
	msg, err := c.MessageConn.ReadMessage(ctx)
	if err == nil && !c.h.warned.Load() && containsQuoted(msg, markStart) && containsQuoted(msg, markEnabled) &&
		sandboxedWithNetwork(msg) && c.h.warned.CompareAndSwap(false, true) {
		c.h.log.Warn("sandboxed process/start with network access on a WebSocket listener without auth: "+
			"the command can reach this listener; upgrades from sandboxed commands it can identify are refused, "+
			"but only listener auth keeps them from starting unconfined processes; restart with "+RemedyWSAuth,
			"component", "serve", "peer", c.peer)
	}
	return msg, err
}

// containsQuoted reports whether msg contains mark, which starts with '"'. It finds
// candidates with bytes.IndexByte, several times faster than bytes.Contains on the large
// quote-free stretches of a message (the base64 of a 1 MiB fs/writeBlock chunk, where
// bytes.Contains cost the server more than its JSON decoding; issue 28).
func containsQuoted(msg, mark []byte) bool {
	for {
		i := bytes.IndexByte(msg, '"')
		if i < 0 {
			return false
		}
		if bytes.HasPrefix(msg[i:], mark) {
			return true
		}
		msg = msg[i+1:]
	}
}

// sandboxedWithNetwork reports whether msg is a process/start request whose sandbox
// profile (managed or external) enables the network.
func sandboxedWithNetwork(msg []byte) bool {
	var req struct {
		Method string `json:"method"`
		Params struct {
			Sandbox json.RawMessage `json:"sandbox"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &req) != nil || req.Method != "process/start" || len(req.Params.Sandbox) == 0 {
		return false
	}
	var sc policy.Context
	if json.Unmarshal(req.Params.Sandbox, &sc) != nil {
		return false
	}
	p := sc.Permissions
	return p.Type != policy.ProfileDisabled && p.Network == policy.NetworkEnabled
}
