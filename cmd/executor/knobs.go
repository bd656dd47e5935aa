package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
)

// Debug knobs read from the environment, all in this file.
//
//	EXECUTOR_CPUPROFILE=FILE  write a CPU profile of the whole run to FILE; "%p" in FILE
//	                          becomes the process id, so that the executors a bench or
//	                          test starts (which inherit the variable) each write their
//	                          own profile instead of overwriting the parent's
func startDebugKnobs() (stop func(), err error) {
	path := os.Getenv("EXECUTOR_CPUPROFILE")
	if path == "" {
		return func() {}, nil
	}
	path = strings.ReplaceAll(path, "%p", strconv.Itoa(os.Getpid()))
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
