package supervisor

import (
	"context"
	"sync"
	"time"

	"github.com/mcpward/mcpward/ports"
)

// window is the time one call may take, and the path of its progress.
//
// The call runs under ctx, which ends when the caller's ctx does or when
// the timer fires. The timer is armed for min(idle, what is left of max)
// and re-armed the same way on every progress notification, so the call
// times out after idle without progress and never lasts beyond max. A zero
// idle or max is no bound of that kind.
//
// The caller's own progress callback (user) is fed through a hand-off that
// keeps only the latest notification: the session's notification
// goroutine never waits for the host, and however many notifications a
// server sends nothing queues up.
type window struct {
	ctx    context.Context
	cancel context.CancelFunc
	idle   time.Duration
	max    time.Duration
	start  time.Time

	mu     sync.Mutex
	done   bool
	timer  *time.Timer // nil without idle and max
	latest ports.Progress

	user   func(ports.Progress) // nil: no hand-off
	kick   chan struct{}        // one pending hand-off
	quit   chan struct{}        // closed by stop
	exited chan struct{}        // closed when the hand-off goroutine ends
}

// openWindow returns the window of one call made under ctx whose caller
// reports progress to user (nil: none), or nil when the call needs none
// (no timeout and no user): then the call runs under ctx itself. Only a
// call with a user asks the server for progress (window.progress as its
// OnProgress), so without one the timer is never restarted.
func (s *Server) openWindow(ctx context.Context, user func(ports.Progress)) *window {
	if s.callTimeout <= 0 && s.callTimeoutMax <= 0 && user == nil {
		return nil
	}
	w := &window{idle: s.callTimeout, max: s.callTimeoutMax, user: user}
	w.ctx, w.cancel = context.WithCancel(ctx)
	if d := w.next(); d > 0 {
		w.start = time.Now()
		w.timer = time.AfterFunc(d, w.cancel)
	}
	if user != nil {
		w.kick = make(chan struct{}, 1)
		w.quit = make(chan struct{})
		w.exited = make(chan struct{})
		go w.handOff()
	}
	return w
}

// plainBound is how long a call that asked for no progress may take: the
// idle window capped by the maximum, as window.next computes it at the
// start of a call; 0 when neither bounds the call.
func (s *Server) plainBound() time.Duration {
	w := window{idle: s.callTimeout, max: s.callTimeoutMax}
	return w.next()
}

// next returns how long the timer runs from now: the idle window, capped
// by what is left of max; 0 when neither bounds the call, and at least a
// nanosecond when max is used up (the timer already fires by then).
func (w *window) next() time.Duration {
	d := w.idle
	if w.max > 0 {
		left := w.max
		if !w.start.IsZero() {
			left -= time.Since(w.start)
		}
		if d <= 0 || left < d {
			d = max(left, time.Nanosecond)
		}
	}
	return d
}

// progress is the session's OnProgress for the call: it restarts the idle
// window and hands p to the caller. It never blocks.
func (w *window) progress(p ports.Progress) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	if w.timer != nil && w.idle > 0 && w.ctx.Err() == nil {
		w.timer.Reset(w.next())
	}
	if w.user != nil {
		w.latest = p
		select {
		case w.kick <- struct{}{}:
		default: // a hand-off is pending: it will carry p
		}
	}
}

// handOff calls the caller's callback with the latest progress, once per
// batch of notifications that arrived while it was busy. After stop it
// delivers what is still pending and ends.
func (w *window) handOff() {
	defer close(w.exited)
	deliver := func() {
		w.mu.Lock()
		p := w.latest
		w.mu.Unlock()
		w.user(p)
	}
	for {
		select {
		case <-w.kick:
			deliver()
		case <-w.quit:
			select {
			case <-w.kick:
				deliver()
			default:
			}
			return
		}
	}
}

// timedOut reports whether the window's own bound ended the call (not the
// caller's ctx, which is checked first by the caller of timedOut).
func (w *window) timedOut() bool { return w.ctx.Err() != nil }

// stop ends the window: no progress is taken any more, the timer is
// stopped, the call's ctx is released, and the caller's callback has
// returned for the last time.
func (w *window) stop() {
	w.mu.Lock()
	w.done = true
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
	w.cancel()
	if w.user != nil {
		close(w.quit)
		<-w.exited
	}
}
