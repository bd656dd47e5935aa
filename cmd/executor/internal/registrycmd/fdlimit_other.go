//go:build !linux && !darwin

package registrycmd

// fdLimit reports no limit: server.MaxConns applies as is.
func fdLimit() (uint64, bool) { return 0, false }
