package executor

import (
	"context"
	"path/filepath"

	"github.com/execlab/executor/executor/capdiscover"
	"github.com/execlab/executor/executor/protocol"
)

// discoveryHomes are the directories capabilities/discoverV2 scans, resolved once in
// NewServer: Options.CodexHome (cmd/ reads $CODEX_HOME) with symlinks resolved and made
// absolute, else $HOME/.codex; and $HOME (else the passwd entry). They cannot change under
// a running process.
func discoveryHomes(codexHome string) capdiscover.Homes {
	home := homeDir()
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
}

func capabilitiesDiscoverV2(ctx context.Context, c *conn, p *protocol.DiscoverV2Params) (any, error) {
	// Scanned on every call (no cache): always as fresh as the files; see
	// executor/capdiscover/doc.go.
	return capdiscover.New(c.srv.fs).DiscoverV2(ctx, p, c.srv.homes)
}
