//go:build !linux

package execcli

import "errors"

// makeRaw is only implemented on Linux; elsewhere -t runs without raw mode.
func makeRaw(int) (func(), error) {
	return nil, errors.New("raw terminal mode is not supported on this OS")
}
