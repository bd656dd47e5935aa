//go:build !linux

package sandbox

import "context"

// Probe reports no backend on this OS.
func Probe(ctx context.Context, opts *ProbeOptions) Report {
	return Report{Backend: BackendNone, Warnings: []string{}, unavailable: "the Linux sandbox is unavailable on this OS"}
}
