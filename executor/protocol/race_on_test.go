//go:build race

package protocol_test

// raceEnabled: sync.Pool drops items at random under the race detector, so allocation
// pins that rely on a pool are not exact there.
const raceEnabled = true
