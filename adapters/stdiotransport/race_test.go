//go:build race

package stdiotransport

// raceEnabled reports whether the race detector is on (sync.Pool then
// drops a quarter of what is Put).
const raceEnabled = true
