package portstest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports/portstest"
)

// sleep runs c.Sleep(ctx, d) in a goroutine and returns its result channel.
func sleep(ctx context.Context, c *portstest.Clock, d time.Duration) <-chan error {
	errc := make(chan error, 1)
	go func() { errc <- c.Sleep(ctx, d) }()
	return errc
}

func TestClockNowAndAdvance(t *testing.T) {
	c := portstest.NewClock(testEpoch)
	assert.Equal(t, testEpoch, c.Now())
	c.Advance(90 * time.Second)
	assert.Equal(t, testEpoch.Add(90*time.Second), c.Now())
	c.Advance(0)
	assert.Equal(t, testEpoch.Add(90*time.Second), c.Now())
	assert.Panics(t, func() { c.Advance(-time.Second) })
}

func TestClockSleepWakesOnlyAtDeadline(t *testing.T) {
	ctx := t.Context()
	c := portstest.NewClock(testEpoch)
	short := sleep(ctx, c, 5*time.Second)
	long := sleep(ctx, c, 10*time.Second)
	require.NoError(t, c.BlockUntil(ctx, 2))

	c.Advance(4 * time.Second)
	assert.Equal(t, 2, c.Sleepers(), "no deadline reached")
	c.Advance(time.Second)
	require.NoError(t, <-short, "woken exactly at its deadline")
	assert.Equal(t, 1, c.Sleepers())
	select {
	case <-long:
		t.Fatal("the long sleep woke early")
	default:
	}
	c.Advance(time.Hour)
	require.NoError(t, <-long)
	assert.Zero(t, c.Sleepers())
}

func TestClockSleepDeadlineFromSleepTime(t *testing.T) {
	ctx := t.Context()
	c := portstest.NewClock(testEpoch)
	c.Advance(time.Minute)
	errc := sleep(ctx, c, time.Second)
	require.NoError(t, c.BlockUntil(ctx, 1))
	c.Advance(999 * time.Millisecond)
	assert.Equal(t, 1, c.Sleepers())
	c.Advance(time.Millisecond)
	require.NoError(t, <-errc)
}

func TestClockSleepReturnsAtOnce(t *testing.T) {
	cases := []struct {
		name    string
		ctx     context.Context
		d       time.Duration
		wantErr error
	}{
		{"zero", context.Background(), 0, nil},
		{"negative", context.Background(), -time.Second, nil},
		{"ended ctx", errCtx(), time.Second, context.Canceled},
		{"ended ctx zero", errCtx(), 0, context.Canceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clock := portstest.NewClock(testEpoch)
			err := clock.Sleep(c.ctx, c.d)
			if c.wantErr == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, c.wantErr)
			}
			assert.Zero(t, clock.Sleepers())
			assert.Equal(t, testEpoch, clock.Now())
		})
	}
}

func TestClockSleepContextEnds(t *testing.T) {
	c := portstest.NewClock(testEpoch)
	ctx, cancel := context.WithCancel(t.Context())
	errc := sleep(ctx, c, time.Second)
	require.NoError(t, c.BlockUntil(t.Context(), 1))
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
	assert.Zero(t, c.Sleepers())
}

func TestClockBlockUntilContextEnds(t *testing.T) {
	c := portstest.NewClock(testEpoch)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, c.BlockUntil(ctx, 1), context.DeadlineExceeded)
	require.NoError(t, c.BlockUntil(ctx, 0))
}

func TestClockConcurrent(t *testing.T) {
	ctx := t.Context()
	c := portstest.NewClock(testEpoch)
	const n = 16
	var errs []<-chan error
	for i := range n {
		errs = append(errs, sleep(ctx, c, time.Duration(i+1)*time.Second))
	}
	require.NoError(t, c.BlockUntil(ctx, n))
	for range n {
		c.Advance(time.Second)
		_ = c.Now()
	}
	for _, errc := range errs {
		require.NoError(t, <-errc)
	}
	assert.Zero(t, c.Sleepers())
	assert.Equal(t, n, c.Calls("Sleep"))
}
