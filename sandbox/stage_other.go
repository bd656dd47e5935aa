//go:build !linux

package sandbox

import (
	"fmt"
	"os"
)

func runStage(args []string) int {
	fmt.Fprintln(os.Stderr, msgUnenforceable+"the Linux sandbox is unavailable on this OS")
	return exitBuildFailure
}
