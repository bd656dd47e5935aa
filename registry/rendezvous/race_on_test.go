//go:build race

package rendezvous_test

// raceEnabled: the race detector makes sync.Pool drop items at random, so allocation
// pins get slack.
const raceEnabled = true
