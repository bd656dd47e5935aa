//go:build !linux

package sandbox

import "context"

// ProbeOptions configure Probe (see the Linux implementation).
type ProbeOptions struct {
	Backend         string
	PATH            string
	Cwd             string
	FakeLandlockABI int
}

// Probe reports no backend on this OS.
func Probe(ctx context.Context, opts *ProbeOptions) Report {
	return Report{Backend: BackendNone, Warnings: []string{}, unavailable: "the Linux sandbox is unavailable on this OS"}
}
