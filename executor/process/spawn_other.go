//go:build !linux

package process

import "errors"

// spawn is unsupported off Linux: Setsid/Pdeathsig semantics and the reference's texts
// were only pinned there.
func spawn(*spawnSpec) (*spawned, error) {
	return nil, errors.New("process spawning is unsupported on this platform")
}
