package mcpsession

import (
	"context"
	"sync"
)

// callSet holds the cancel functions of the calls in flight on a session,
// so that Close can end them. It is what join does with a registration on
// the session's context, for the call path, which takes it on every call:
// a registration there costs an AfterFunc (its context, its stop function
// and the closure join returns), an entry here costs nothing once the map
// has grown to the calls in flight.
type callSet struct {
	mu     sync.Mutex
	closed bool
	next   uint64
	m      map[uint64]context.CancelFunc
}

// joinedCall is a call's context joined with its session: it ends when the
// caller's context does or when Close starts. end releases it.
type joinedCall struct {
	set    *callSet
	id     uint64
	cancel context.CancelFunc
}

// joinCall returns a context that ends when ctx does or when Close starts,
// and what to end it with. A ctx that can never end is joined as join does
// (no registration at all).
func (s *session) joinCall(ctx context.Context) (context.Context, joinedCall) {
	if ctx.Done() == nil {
		return sessionBound{Context: ctx, s: s.ctx}, joinedCall{}
	}
	c, cancel := context.WithCancel(ctx)
	set := &s.calls
	set.mu.Lock()
	if set.closed {
		set.mu.Unlock()
		cancel()
		return c, joinedCall{cancel: cancel}
	}
	if set.m == nil {
		set.m = make(map[uint64]context.CancelFunc)
	}
	set.next++
	id := set.next
	set.m[id] = cancel
	set.mu.Unlock()
	return c, joinedCall{set: set, id: id, cancel: cancel}
}

// end releases the call's context.
func (j joinedCall) end() {
	if j.set != nil {
		j.set.mu.Lock()
		delete(j.set.m, j.id)
		j.set.mu.Unlock()
	}
	if j.cancel != nil {
		j.cancel()
	}
}

// close ends every call in flight and every later one at once.
func (cs *callSet) close() {
	cs.mu.Lock()
	cs.closed = true
	m := cs.m
	cs.m = nil
	cs.mu.Unlock()
	for _, cancel := range m {
		cancel()
	}
}
