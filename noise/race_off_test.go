//go:build !race

package noise_test

const raceEnabled = false
