package executor

import (
	"context"
	"os"
	"path/filepath"
	"sync"

	"github.com/execlab/executor/executor/capdiscover"
	"github.com/execlab/executor/executor/protocol"
)

// discoveryHomes are the directories capabilities/discoverV2 scans, read once from the
// process environment: $CODEX_HOME with symlinks resolved (else $HOME/.codex), and $HOME
// (else the passwd entry). They cannot change under a running process.
var discoveryHomes = sync.OnceValue(func() capdiscover.Homes {
	home := homeDir()
	codexHome := os.Getenv("CODEX_HOME")
	switch {
	case codexHome != "":
		if resolved, err := filepath.EvalSymlinks(codexHome); err == nil {
			codexHome = resolved
		}
		if abs, err := filepath.Abs(codexHome); err == nil {
			codexHome = abs
		}
	case home != "":
		codexHome = filepath.Join(home, ".codex")
	}
	return capdiscover.Homes{CodexHome: codexHome, Home: home}
})

func capabilitiesDiscoverV2(ctx context.Context, c *conn, p *protocol.DiscoverV2Params) (any, error) {
	// Scanned on every call (no cache): always as fresh as the files; see
	// executor/capdiscover/doc.go.
	return capdiscover.New(c.srv.fs).DiscoverV2(ctx, p, discoveryHomes())
}
