package main

import (
	"log/slog"

	"github.com/execlab/executor/executor/process"
)

// startProcessGuard starts the helper that kills the executor's process groups when it
// dies (process.Guard). Without it (it could not start) processes still get the
// reference's Pdeathsig; that is logged, not fatal. A nil *Guard is valid to use and close.
func startProcessGuard(log *slog.Logger) *process.Guard {
	g, err := process.StartGuard()
	if err != nil {
		log.Warn("process guard not started: only group leaders die with the executor", "error", err)
		return nil
	}
	return g
}
