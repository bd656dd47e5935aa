package fs

import (
	"context"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/execlab/executor/executor/protocol"
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
			FileName:    lossyUTF8(de.Name()),
			IsDirectory: mode.IsDir(),
			IsFile:      mode.IsRegular(),
		})
	}
	return &protocol.FsReadDirectoryResult{Entries: entries}, nil
}

// lossyUTF8 mirrors Rust's String::from_utf8_lossy: each maximal invalid subpart becomes one
// U+FFFD.
func lossyUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	out := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || n > 1 {
			out = append(out, s[i:i+n]...)
			i += n
			continue
		}
		out = append(out, "\uFFFD"...)
		i += invalidPrefixLen(s[i:])
	}
	return string(out)
}

// invalidPrefixLen returns the length of the maximal prefix of s that starts a valid UTF-8
// sequence but does not complete it (at least 1).
func invalidPrefixLen(s string) int {
	c := s[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for k := 0; k < need && n < len(s); k++ {
		b := s[n]
		if k == 0 && (b < lo || b > hi) || k > 0 && (b < 0x80 || b > 0xBF) {
			break
		}
		n++
	}
	return n
}
