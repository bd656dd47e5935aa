//go:build !linux

package main

// closeInheritedOnExec is Linux-only (close_range); elsewhere inherited descriptors are
// left as they are.
func closeInheritedOnExec() {}
