package mcpsession

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/ports"
)

// progressTokenPrefix starts every progress token a session sends; the
// rest is a counter, so a token is unique within its session.
const progressTokenPrefix = "mcpward-"

// progressRoutes routes notifications/progress to the call whose token
// they carry. Safe for concurrent use.
//
// Nothing is queued: a notification is handed to the call's OnProgress on
// the SDK's notification goroutine and forgotten, so a flood of
// notifications costs time on that goroutine, never memory here (the
// consumer coalesces; see ports.CallRequest.OnProgress).
type progressRoutes struct {
	next atomic.Uint64
	mu   sync.Mutex
	m    map[string]*progressRoute
}

// progressRoute is the OnProgress of one call in flight.
type progressRoute struct {
	// mu is held while fn runs, so removing the route waits for a
	// delivery under way and fn is never called after the call returned.
	mu   sync.Mutex
	done bool
	fn   func(ports.Progress)
}

// add registers fn under a new token; remove unregisters it and returns
// once no delivery to fn is running.
func (p *progressRoutes) add(fn func(ports.Progress)) (token string, remove func()) {
	token = progressTokenPrefix + strconv.FormatUint(p.next.Add(1), 10)
	r := &progressRoute{fn: fn}
	p.mu.Lock()
	if p.m == nil {
		p.m = make(map[string]*progressRoute)
	}
	p.m[token] = r
	p.mu.Unlock()
	return token, func() {
		p.mu.Lock()
		delete(p.m, token)
		p.mu.Unlock()
		r.mu.Lock()
		r.done = true
		r.mu.Unlock()
	}
}

// deliver hands one progress notification to the call whose token it
// carries. A token that is not a string this session sent for a call
// still in flight (a stale, guessed or numeric token, or none) is dropped.
func (p *progressRoutes) deliver(params *mcp.ProgressNotificationParams) {
	if params == nil {
		return
	}
	token, ok := params.ProgressToken.(string)
	if !ok {
		return
	}
	p.mu.Lock()
	r := p.m[token]
	p.mu.Unlock()
	if r == nil {
		return
	}
	pr := ports.Progress{Progress: params.Progress, Total: params.Total, Message: boundMessage(params.Message)}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		r.fn(pr)
	}
}

// handler is the ClientOptions.ProgressNotificationHandler of the session
// that owns p.
func (p *progressRoutes) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	if req != nil {
		p.deliver(req.Params)
	}
}

// boundMessage cuts s to at most ports.MaxProgressMessage bytes, at the
// start of a UTF-8 sequence so no character is split.
func boundMessage(s string) string {
	if len(s) <= ports.MaxProgressMessage {
		return s
	}
	i := ports.MaxProgressMessage
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}
