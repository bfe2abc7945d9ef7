// Package clock is the time the CLI's progress output reads: the system
// clock in a run, a Fake in tests (its tickers fire when the test advances
// it, so no test sleeps).
package clock

import (
	"sync"
	"time"
)

// Clock tells the time and makes tickers. Implementations are safe for
// concurrent use.
type Clock interface {
	Now() time.Time
	// NewTicker returns a ticker firing every d (d > 0); its channel holds
	// at most one pending tick, like time.Ticker's.
	NewTicker(d time.Duration) Ticker
}

// Ticker is a time.Ticker behind an interface.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// Real returns the system clock.
func Real() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

type realTicker struct{ t *time.Ticker }

func (t realTicker) C() <-chan time.Time { return t.t.C }
func (t realTicker) Stop()               { t.t.Stop() }

// Fake is a Clock that moves only when Advance is called. It is safe for
// concurrent use.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	tickers []*fakeTicker
}

// NewFake returns a Fake reading start.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTicker returns a ticker that fires when Advance passes its times.
func (f *Fake) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive ticker interval")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTicker{f: f, d: d, next: f.now.Add(d), c: make(chan time.Time, 1)}
	f.tickers = append(f.tickers, t)
	return t
}

// Advance moves the time forward by d, firing every ticker whose time
// came (a tick is dropped when one is already pending, as with
// time.Ticker).
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	for _, t := range f.tickers {
		if t.stopped {
			continue
		}
		for !t.next.After(f.now) {
			select {
			case t.c <- t.next:
			default:
			}
			t.next = t.next.Add(t.d)
		}
	}
}

// Tickers is how many tickers are running (not stopped).
func (f *Fake) Tickers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, t := range f.tickers {
		if !t.stopped {
			n++
		}
	}
	return n
}

type fakeTicker struct {
	f       *Fake
	d       time.Duration
	next    time.Time
	c       chan time.Time
	stopped bool
}

func (t *fakeTicker) C() <-chan time.Time { return t.c }

func (t *fakeTicker) Stop() {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	t.stopped = true
}
