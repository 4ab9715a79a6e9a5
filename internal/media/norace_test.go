//go:build !race

package media_test

const raceEnabled = false
