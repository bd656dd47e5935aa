//go:build !race

package jsonwire_test

const raceEnabled = false
