//go:build !linux

package sandbox

import "github.com/execlab/executor/sandbox/policy"

// directBwrap: no bubblewrap outside Linux.
func (l *Launcher) directBwrap(*stageArgs, *policy.Policy, policy.Plan, []string) []string {
	return nil
}
