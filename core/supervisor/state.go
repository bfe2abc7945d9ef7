package supervisor

import (
	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/refusal"
)

// State is the connection state of a Server (see the package comment).
type State int

// The states. The zero value is Idle.
const (
	// Idle: not connected and nothing is trying to connect.
	Idle State = iota
	// Connecting: an attempt (connect, first discovery, build) is running.
	Connecting
	// Ready: a session is up and its catalog is installed.
	Ready
	// Backoff: sleeping before the next attempt.
	Backoff
	// Failed: a failure that needs a caller's Connect; nothing retries.
	Failed
	// Closed: Close was called; final.
	Closed
)

var stateNames = [...]string{
	Idle:       "idle",
	Connecting: "connecting",
	Ready:      "ready",
	Backoff:    "backoff",
	Failed:     "failed",
	Closed:     "closed",
}

// String returns the state's lower-case word ("idle", "connecting",
// "ready", "backoff", "failed", "closed"), or "unknown" for a value that is
// none of them.
func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return "unknown"
	}
	return stateNames[s]
}

// MarshalText implements encoding.TextMarshaler with String's word.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Status is a snapshot of a Server. Its pointers are shared and read-only:
// nobody may modify what they point to.
type Status struct {
	// Server is the server id of the target.
	Server string
	// State is the connection state.
	State State
	// Err is the last failure, nil if none. In Failed it is the failure
	// that ended there; in Ready it is the failure of the latest discovery
	// or refresh, nil when that succeeded; in Backoff and Connecting it is
	// the failure being retried (or the disconnect); in Idle after a
	// Connect whose ctx ended, that end (Transient "cancelled" or
	// "timeout"); in Closed, nil (Close drops it: closing is not a
	// failure). Class is what callers branch on.
	Err *refusal.Error
	// Attempts is the number of failed attempts of the running (or last)
	// connect sequence, counted toward MaxAttempts; 0 once Ready.
	Attempts int
	// Disconnects is the number of consecutive disconnects counted toward
	// MaxAttempts (see the package comment). Connect resets it; it is
	// updated when a session ends, so a long-lived Ready session still
	// shows the count of the disconnects before it.
	Disconnects int
	// Catalog is the retained catalog (possibly Stale or partial), nil if
	// none.
	Catalog *catalog.Catalog
}
