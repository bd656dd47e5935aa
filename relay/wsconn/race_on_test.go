//go:build race

package wsconn_test

// raceEnabled: the race detector makes sync.Pool drop items at random, so allocation
// pins get slack.
const raceEnabled = true
