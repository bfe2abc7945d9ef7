package mcpsession

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// One tools page ahead.
//
// A listing asks for its pages one after another, and the client's work
// on a page (decoding it, and the caller's own) used to sit between one
// request and the next: the listing took the server's time plus the
// client's. Over the session's own path the page's cursor is known as
// soon as its raw bytes are in, before the page is decoded, so the
// session asks for the next page then, and the server works on page n+1
// while the client decodes page n. The rules:
//   - At most one page is ahead, and only from a tools List whose page
//     came over the session's own path with a nextCursor: never after the
//     server's last page, never from any other request.
//   - The next tools List of that cursor takes it (waiting for it if it
//     is still in flight); a List of any other cursor drops it and asks
//     for its own page.
//   - A page ahead that no List takes within the page timeout (the time
//     the List that started it had, from its context's deadline;
//     aheadHold when it had none) is dropped, as it is when the page that
//     started it does not decode, and when the session closes. Dropping
//     ends its request: its response, when it comes, is read and
//     discarded by the session's reader (rawrequest.go), and the server is
//     sent notifications/cancelled for it, as for any abandoned request.
//   - The page's outcome is the List's: an error reply, a connection that
//     ended, a result that does not decode are refused exactly as they
//     would be without the page ahead. A List whose context ends while it
//     waits for the page is abandoned as today (list_abandoned). A page
//     ahead that was dropped, or ended by the session's close, is never
//     returned: the List asks for its page itself.
//
// The cost: a listing that stops before the server's last page (Discover
// at its page, item or byte bound, or on a failure above the session)
// has asked for one page more than it reads; that request is dropped as
// above. The session cannot know the caller's bounds.

// aheadHold is how long a page ahead is kept for a List whose context had
// no deadline (core/catalog's default page timeout).
const aheadHold = 30 * time.Second

// aheadPage is a tools/list request sent before a List asked for it.
type aheadPage struct {
	cursor string
	done   chan struct{} // closed when raw and err are set
	raw    json.RawMessage
	err    error
	ctx    context.Context // the request's own; ends when it is dropped
	cancel context.CancelFunc
	timer  *time.Timer
}

// listAhead holds the session's page ahead, if any.
type listAhead struct {
	mu sync.Mutex
	p  *aheadPage
}

// startAhead sends the tools/list request for cursor now, to be taken by
// the next List of that cursor within hold. ctx's values (not its end)
// are the request's; it ends when the session closes or it is dropped.
// The caller holds toolsMu.
func (s *session) startAhead(ctx context.Context, cursor string, hold time.Duration) {
	params, ok := s.listToolsParams(cursor)
	if !ok {
		return
	}
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	unhook := context.AfterFunc(s.ctx, cancel)
	p := &aheadPage{cursor: cursor, done: make(chan struct{}), ctx: pctx}
	p.cancel = func() {
		unhook()
		cancel()
	}
	s.ahead.mu.Lock()
	old := s.ahead.p
	s.ahead.p = p
	p.timer = time.AfterFunc(hold, func() { s.dropAhead(p) })
	s.ahead.mu.Unlock()
	if old != nil {
		old.timer.Stop()
		old.cancel()
	}
	go func() {
		defer close(p.done)
		p.raw, p.err = s.roundTrip(pctx, methodListTools, params)
	}()
}

// dropAhead drops p if it is still the page ahead (nobody took it).
func (s *session) dropAhead(p *aheadPage) {
	s.ahead.mu.Lock()
	mine := s.ahead.p == p
	if mine {
		s.ahead.p = nil
	}
	s.ahead.mu.Unlock()
	if mine {
		p.timer.Stop()
		p.cancel()
	}
}

// takeAhead returns the page ahead if it is cursor's, nil otherwise; a
// page ahead of another cursor is dropped. The caller holds toolsMu and
// must call the returned page's cancel once done with it.
func (s *session) takeAhead(cursor string) *aheadPage {
	s.ahead.mu.Lock()
	p := s.ahead.p
	s.ahead.p = nil
	s.ahead.mu.Unlock()
	if p == nil {
		return nil
	}
	p.timer.Stop()
	if p.cursor != cursor {
		p.cancel()
		return nil
	}
	return p
}

// endAhead drops the page ahead, if any. The caller holds toolsMu.
func (s *session) endAhead() {
	s.ahead.mu.Lock()
	p := s.ahead.p
	s.ahead.mu.Unlock()
	if p != nil {
		s.dropAhead(p)
	}
}

// awaitAhead waits for the page ahead p under ctx. ok is false when p
// ended without an outcome of its own (the session closed): the caller
// asks for the page itself. When ctx ends first, p's request is ended
// (notifications/cancelled) and err is ctx's error.
func awaitAhead(ctx context.Context, p *aheadPage) (raw json.RawMessage, ok bool, err error) {
	defer p.cancel()
	select {
	case <-p.done:
		if p.err != nil && p.ctx.Err() != nil {
			return nil, false, nil
		}
		return p.raw, true, p.err
	case <-ctx.Done():
		return nil, true, ctx.Err()
	}
}

// nextCursorOf returns the nextCursor of a raw tools/list result as the
// SDK's decoder reads it ("" when there is none, or the result does not
// decode: then no page is asked for ahead).
func nextCursorOf(raw []byte) string {
	var v struct {
		NextCursor string `json:"nextCursor"`
	}
	if parseAsSDK(raw, &v) != nil {
		return ""
	}
	return v.NextCursor
}
