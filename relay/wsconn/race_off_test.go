//go:build !race

package wsconn_test

const raceEnabled = false
