package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// Debug knobs read from the environment, all in this file.
//
//	EXECUTOR_CPUPROFILE=FILE  write a CPU profile of the whole run to FILE
func startDebugKnobs() (stop func(), err error) {
	path := os.Getenv("EXECUTOR_CPUPROFILE")
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting CPU profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
