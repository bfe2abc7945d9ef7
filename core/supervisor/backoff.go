package supervisor

import (
	"context"
	"math"
	"time"
)

// backoff computes the sleep after the n-th consecutive failure (n >= 1):
// equal jitter over a capped exponential (see the package comment).
func backoff(n int, base, maxDelay time.Duration, jitter float64) time.Duration {
	if n < 1 {
		n = 1
	}
	c := min(base, maxDelay)
	for i := 1; i < n; i++ {
		if c >= maxDelay/2 { // doubling would reach the cap (or overflow)
			c = maxDelay
			break
		}
		c *= 2
	}
	if math.IsNaN(jitter) || jitter < 0 {
		jitter = 0
	}
	if jitter > 1 {
		jitter = 1
	}
	half := c / 2
	// float64 rounding may overshoot by a few ns for huge durations.
	return min(c, half+time.Duration(jitter*float64(c-half)))
}

// realClock is ports.Clock on the system clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
