//go:build !unix

package credmask

// writableDir cannot check permissions here; NewCA reports failures when it runs.
func writableDir(string) error { return nil }
