package fs

import (
	"context"

	"github.com/execlab/executor/executor/protocol"
	"github.com/execlab/executor/jsonwire"
	"golang.org/x/sys/unix"
)

// writeFile runs WriteFile in this process (routed decides where).
func (s *Service) writeFile(ctx context.Context, p *protocol.FsWriteFileParams) (*protocol.FsEmptyResult, error) {
	native, err := nativePath(p.Path)
	if err != nil {
		return nil, err
	}
	data, derr := jsonwire.DecodeBase64(p.DataBase64)
	if derr != nil {
		return nil, jsonwire.InvalidRequest("fs/writeFile requires valid base64 dataBase64: %s", derr.Error())
	}
	f, err := openFile(native, follow(p.FollowSymlinks), unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC, 0o666)
	if err != nil {
		return nil, err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr != nil {
		return nil, rpcError(werr)
	}
	if cerr != nil {
		return nil, rpcError(cerr)
	}
	return &protocol.FsEmptyResult{}, nil
}
