package supervisor

import (
	"math"
	"testing"
	"time"
)

// FuzzBackoff checks the backoff's invariants for any input: the delay is
// within [c/2, c] of the capped exponential c, never above MaxDelay, never
// negative, and does not shrink as failures accumulate.
func FuzzBackoff(f *testing.F) {
	f.Add(1, int64(250*time.Millisecond), int64(10*time.Second), 0.5)
	f.Add(40, int64(1), int64(math.MaxInt64), 0.999)
	f.Add(3, int64(math.MaxInt64/2+1), int64(math.MaxInt64), 1.0)
	f.Add(0, int64(7), int64(5), math.NaN())
	f.Fuzz(func(t *testing.T, n int, base, maxDelay int64, jitter float64) {
		if base <= 0 || maxDelay <= 0 || n > 1<<20 {
			t.Skip() // New replaces non-positive durations by defaults
		}
		b, m := time.Duration(base), time.Duration(maxDelay)
		d := backoff(n, b, m, jitter)
		if d < 0 || d > m {
			t.Fatalf("backoff(%d, %v, %v, %v) = %v outside [0, %v]", n, b, m, jitter, d, m)
		}
		c := min(b, m)
		for i := 1; i < n && c < m; i++ {
			if c > m/2 {
				c = m
				break
			}
			c *= 2
		}
		c = min(c, m)
		if d < c/2 || d > c {
			t.Fatalf("backoff(%d, %v, %v, %v) = %v outside [%v, %v]", n, b, m, jitter, d, c/2, c)
		}
		if next := backoff(n+1, b, m, jitter); next < d {
			t.Fatalf("backoff shrank from %v to %v at n=%d", d, next, n)
		}
	})
}
