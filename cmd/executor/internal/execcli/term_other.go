//go:build !linux

package execcli

import (
	"errors"
	"os"

	"github.com/execlab/executor/executor/protocol"
)

// IsTerminal is only implemented on Linux; elsewhere -t must be given explicitly.
func IsTerminal(int) bool { return false }

// makeRaw is only implemented on Linux; elsewhere -t runs without raw mode.
func makeRaw(int) (func(), error) {
	return nil, errors.New("raw terminal mode is not supported on this OS")
}

func termSize(int) (protocol.PtySize, error) {
	return protocol.PtySize{}, errors.New("terminal size is not supported on this OS")
}

// stdinCancelable: off Linux a pending stdin Read cannot be ended, so Run does not wait
// for the stdin goroutine (it ends with the process).
const stdinCancelable = false

// cancelableReader is a plain reader off Linux: Cancel cannot end a pending Read.
type cancelableReader struct{ f *os.File }

func newCancelableReader(f *os.File) (*cancelableReader, error) { return &cancelableReader{f: f}, nil }
func (c *cancelableReader) Read(p []byte) (int, error)          { return c.f.Read(p) }
func (c *cancelableReader) Cancel()                             {}
func (c *cancelableReader) Close()                              {}
