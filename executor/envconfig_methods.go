package executor

import (
	"context"
	"sync"

	"github.com/execlab/executor/executor/envconfig"
	"github.com/execlab/executor/executor/protocol"
)

// envConfigReader serves environmentConfig/read from the process environment
// ($CODEX_HOME, $HOME, /etc/codex), read once: the reference reads the same variables
// on each call, and they cannot change under a running process.
var envConfigReader = sync.OnceValue(func() *envconfig.Reader { return envconfig.NewReader(nil) })

// familyEnvConfig names the method family in handshake-order errors (PROBED: "client
// must call initialize before using environment config methods").
const familyEnvConfig = "environment config"

// environmentConfigRead needs no sandbox and no session state: the read runs with the
// executor's privileges, like the reference's (spec/capabilities-0.171.0.md §6.1).
func environmentConfigRead(ctx context.Context, _ *conn, p *protocol.EnvironmentConfigReadParams) (any, error) {
	return envConfigReader().Read(ctx, p)
}
