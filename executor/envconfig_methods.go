package executor

import (
	"context"

	"github.com/execlab/executor/executor/envconfig"
	"github.com/execlab/executor/executor/protocol"
)

// newEnvConfigReader is the server's environmentConfig/read source: Options.CodexHome
// (cmd/ resolves $CODEX_HOME; "" means ~/.codex, as for the reference), the user's home
// and /etc/codex.
func newEnvConfigReader(codexHome string) *envconfig.Reader {
	cfg := envconfig.DefaultConfig()
	cfg.CodexHome = codexHome
	return envconfig.NewReader(&cfg)
}

// familyEnvConfig names the method family in handshake-order errors (PROBED: "client
// must call initialize before using environment config methods").
const familyEnvConfig = "environment config"

// environmentConfigRead needs no sandbox and no session state: the read runs with the
// executor's privileges, like the reference's (spec/capabilities-0.171.0.md §6.1).
func environmentConfigRead(ctx context.Context, c *conn, p *protocol.EnvironmentConfigReadParams) (any, error) {
	return c.srv.envcfg.Read(ctx, p)
}
