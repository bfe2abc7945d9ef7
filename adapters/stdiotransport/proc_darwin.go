package stdiotransport

// observeExit cannot watch an exit without reaping on darwin; the reaper
// waits first and kills the remaining group afterwards.
func observeExit(int) bool { return false }

// exitedNow cannot look at an exit without reaping on darwin: the reaper's
// order alone decides whether an exit was the child's own.
func exitedNow(int) bool { return false }
