// Package interrupt turns SIGINT, SIGTERM and SIGHUP into the end of the
// CLI's context, keeping which signal came (signal.NotifyContext does not),
// and lets a second signal force the exit.
package interrupt

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Signals are the signals the CLI handles.
var Signals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// ExitCode is the exit code of a run ended by sig: 128 plus its number
// (130 SIGINT, 143 SIGTERM, 129 SIGHUP), 1 for a signal without a number.
func ExitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}

// Handler is a context ended by the first of its signals. It is safe for
// concurrent use.
type Handler struct {
	ctx    context.Context
	cancel context.CancelFunc
	ch     chan os.Signal
	done   chan struct{}
	stop   sync.Once

	mu  sync.Mutex
	sig os.Signal
}

// Notify starts handling sigs: the first cancels the context (after
// calling first, when not nil); a second one calls again (when not nil)
// with the first signal, which is expected to exit the process. Stop ends
// the handling.
func Notify(parent context.Context, first, again func(os.Signal), sigs ...os.Signal) *Handler {
	ctx, cancel := context.WithCancel(parent)
	h := &Handler{ctx: ctx, cancel: cancel, ch: make(chan os.Signal, 2), done: make(chan struct{})}
	signal.Notify(h.ch, sigs...)
	go func() {
		var caught os.Signal
		select {
		case caught = <-h.ch:
		case <-h.done:
			return
		}
		h.mu.Lock()
		h.sig = caught
		h.mu.Unlock()
		if first != nil {
			first(caught)
		}
		cancel()
		select {
		case <-h.ch:
			if again != nil {
				again(caught)
			}
		case <-h.done:
		}
	}()
	return h
}

// Context is ended by the first signal (or when the parent ends).
func (h *Handler) Context() context.Context { return h.ctx }

// Signal is the first signal caught, nil if none.
func (h *Handler) Signal() os.Signal {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sig
}

// Stop stops handling the signals (they get their default action again)
// and cancels the context. It is idempotent.
func (h *Handler) Stop() {
	h.stop.Do(func() {
		signal.Stop(h.ch)
		close(h.done)
		h.cancel()
	})
}
