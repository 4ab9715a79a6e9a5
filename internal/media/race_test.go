//go:build race

package media_test

// raceEnabled: the race detector makes sync.Pool drop items at random, so allocation
// figures measured under it say nothing about the real program.
const raceEnabled = true
