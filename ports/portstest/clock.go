package portstest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/mcpward/mcpward/ports"
)

var _ ports.Clock = (*Clock)(nil)

// Clock is a fake ports.Clock whose time moves only by Advance. Sleep
// blocks until Advance reaches its deadline or its ctx ends; Sleepers and
// BlockUntil let a test wait until the code under test is asleep, without
// real sleeps. Fallible method: "Sleep".
type Clock struct {
	Faults
	mu       sync.Mutex
	now      time.Time
	sleepers []*sleeper
	changed  chan struct{} // closed and replaced whenever sleepers changes
}

// sleeper is one blocked Sleep; woke is closed when Advance reaches until.
type sleeper struct {
	until time.Time
	woke  chan struct{}
}

// NewClock returns a Clock reading start.
func NewClock(start time.Time) *Clock {
	c := &Clock{now: start}
	c.setMethods("Sleep")
	return c
}

// Now returns the fake current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep returns ctx.Err() at once when ctx has ended and nil at once when
// d <= 0; otherwise it blocks until Advance moves the time to Now()+d or
// later (nil) or ctx ends (ctx.Err()).
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := c.hit("Sleep"); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	c.mu.Lock()
	s := &sleeper{until: c.now.Add(d), woke: make(chan struct{})}
	c.sleepers = append(c.sleepers, s)
	c.notifyLocked()
	c.mu.Unlock()

	select {
	case <-s.woke:
		return nil
	case <-ctx.Done():
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.sleepers, s)
	if i < 0 { // Advance woke it meanwhile
		return nil
	}
	c.sleepers = slices.Delete(c.sleepers, i, i+1)
	c.notifyLocked()
	return ctx.Err()
}

// Advance moves the time forward by d and wakes every Sleep whose deadline
// it reached. It panics if d is negative.
func (c *Clock) Advance(d time.Duration) {
	if d < 0 {
		panic("portstest: Clock.Advance with a negative duration")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	n := len(c.sleepers)
	c.sleepers = slices.DeleteFunc(c.sleepers, func(s *sleeper) bool {
		if s.until.After(c.now) {
			return false
		}
		close(s.woke)
		return true
	})
	if len(c.sleepers) != n {
		c.notifyLocked()
	}
}

// Sleepers reports how many Sleep calls are blocked.
func (c *Clock) Sleepers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sleepers)
}

// BlockUntil waits until at least n Sleep calls are blocked (nil) or ctx
// ends (ctx.Err()).
func (c *Clock) BlockUntil(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		if len(c.sleepers) >= n {
			c.mu.Unlock()
			return nil
		}
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// notifyLocked wakes every BlockUntil. c.mu is held.
func (c *Clock) notifyLocked() {
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}
