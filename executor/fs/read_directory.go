package fs

import (
	"context"
	"os"
	"path/filepath"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/internal/rustutf8"
)

// readDirectory runs ReadDirectory in this process (routed decides where).
func (s *Service) readDirectory(ctx context.Context, p *protocol.FsReadDirectoryParams) (*protocol.FsReadDirectoryResult, error) {
	native, err := nativePath(p.Path)
	if err != nil {
		return nil, err
	}
	des, err := os.ReadDir(native)
	if err != nil {
		return nil, rpcError(err)
	}
	entries := make([]protocol.FsDirectoryEntry, 0, len(des))
	for _, de := range des {
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		mode := de.Type()
		if mode&os.ModeSymlink != 0 {
			st, err := os.Stat(filepath.Join(native, de.Name()))
			if err != nil {
				continue
			}
			mode = st.Mode().Type()
		}
		entries = append(entries, protocol.FsDirectoryEntry{
			FileName:    rustutf8.Lossy(de.Name()),
			IsDirectory: mode.IsDir(),
			IsFile:      mode.IsRegular(),
		})
	}
	return &protocol.FsReadDirectoryResult{Entries: entries}, nil
}
