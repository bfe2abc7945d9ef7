package ports

import (
	"context"
	"time"
)

// Clock is time as the supervisor sees it, so backoff is testable.
// Safe for concurrent use.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Sleep waits for d or until ctx ends, returning ctx.Err() in that case.
	Sleep(ctx context.Context, d time.Duration) error
}
