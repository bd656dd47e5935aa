package credmask

// The session's credential registry (§9.2), probed on 0.171.0: credentials brokered
// for one launch stay registered for the later launches of the same session.
//
//   - A real value seen again (same provider, same value) gets the dummy it got
//     before, also when it now sits in another variable (an alias of the earlier
//     canonical variable).
//   - The marker of a launch lists every registered [name, dummy] pair whose dummy
//     occurs in the launch's environment, including names from earlier launches
//     ("@alias:B2" of the first launch is listed again by a second launch whose A
//     holds the same value).
//   - A launch's proxy swaps back every credential registered so far whose provider
//     is active in the launch (built-ins always; a custom provider with the same
//     configuration).
//
// Another session (a new connection without resume) starts empty: its dummies differ.

import (
	"slices"
	"strings"
	"sync"
)

// Registry holds the credentials and marker pairs of one session. The zero value is
// empty and ready; it is safe for concurrent use (Prepare holds mu for its whole
// run, so that two launches never mint two dummies for one value).
type Registry struct {
	// mu guards creds and pairs.
	mu    sync.Mutex
	creds []*credential
	pairs markerSet
}

// Len is the number of registered credentials.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.creds)
}

// usedPairs returns the registered pairs whose dummy occurs in a value of env other
// than the marker itself.
func usedPairs(pairs [][2]string, env map[string]string) [][2]string {
	var out [][2]string
	for _, p := range pairs {
		for k, v := range env {
			if k != EnvBrokeredCredentials && strings.Contains(v, p[1]) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// snapshot returns a Broker over the registered credentials (a copy: later launches
// do not change it). mu must be held.
func (r *Registry) snapshotLocked() *Broker {
	return &Broker{creds: slices.Clone(r.creds)}
}
