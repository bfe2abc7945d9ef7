package mcpsession

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gateStale is how long a message the gate let through may wait for the
// SDK's handler before the gate stops waiting for it: the SDK refuses some
// messages (malformed params, a notification with an id) before the
// handler, which then never reports them handled.
const gateStale = time.Second

// gated are the methods a server may send that the session acts on, each
// coalesced on its own: list changes (signals), progress, resource
// updates, and the server-to-client requests the SDK answers (ping; the
// others it refuses, or the host's ports answer). Log messages
// (notifications/message) pass only once the session asked for them, at
// most maxLogPending at a time (logs.go). Every other method —
// cancellations, anything unknown — is dropped by the gate: the session
// ignores it, and
// the SDK would only queue it.
var gated = map[string]bool{
	"notifications/tools/list_changed":     true,
	"notifications/prompts/list_changed":   true,
	"notifications/resources/list_changed": true,
	"notifications/progress":               true,
	"notifications/resources/updated":      true,
	"ping":                                 true,
	"roots/list":                           true,
	"sampling/createMessage":               true,
	"elicitation/create":                   true,
}

// methodResourceUpdated is the notification of a subscribed resource's
// change.
const methodResourceUpdated = "notifications/resources/updated"

// inboundGate bounds what a server can make the SDK queue. The SDK's
// connection puts every inbound request and notification in a queue for
// its handler with no bound (internal/jsonrpc2: it must read on to reach
// responses), and its handler is slower than its reader, so a server that
// floods notifications makes the client's memory grow without limit. A
// transport that supports it (Conn.InboundFilter) asks admit about every
// request and notification before the SDK sees it: admit lets through at
// most one notification per method the handler has not reached yet (a list
// change or progress notification is a signal: a second one while the
// first waits says nothing more) and at most maxPendingCalls requests per
// method (each gets an answer, a refusal when the session is busy), and
// drops every method the session does not act on. The SDK's queue then
// holds at most len(gated)*maxPendingCalls messages, plus as many per
// method and gateStale for messages the SDK refused unhandled.
// Safe for concurrent use.
type inboundGate struct {
	mu      sync.Mutex
	pending map[string]time.Time // method → when let through, until handled
	// calls are the requests let through per method, oldest first, until
	// handled: up to maxPendingCalls of one method may wait, so a burst of
	// server requests (an elicitation storm) is answered — each refused by
	// name but one — rather than dropped unanswered.
	calls map[string][]time.Time
	now   func() time.Time
	logs  logGate // notifications/message (logs.go)
	// lostUpdates is set when a notifications/resources/updated was
	// dropped while another waited (see session.resourceUpdated).
	lostUpdates atomic.Bool
}

// maxPendingCalls bounds the requests of one method that may wait for the
// SDK's handler; beyond it a request is dropped (and gets no answer).
const maxPendingCalls = 8

// gateClock is the clock of new gates (a test freezes it).
var gateClock = time.Now

func newInboundGate() *inboundGate {
	return &inboundGate{pending: map[string]time.Time{}, now: gateClock}
}

// admit reports whether a message of method from the server may reach the
// SDK (call tells a request from a notification; a method is gated the
// same either way).
func (g *inboundGate) admit(method string, call bool) bool {
	if method == methodLog {
		return g.logs.admit(g.now())
	}
	if !gated[method] {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if call {
		return g.admitCall(method, now)
	}
	if at, ok := g.pending[method]; ok && now.Sub(at) < gateStale {
		if method == methodResourceUpdated {
			g.lostUpdates.Store(true)
		}
		return false
	}
	g.pending[method] = now
	return true
}

// handled marks method's waiting message as reached by the handler.
func (g *inboundGate) handled(method string) {
	if method == methodLog {
		g.logs.handled()
		return
	}
	g.mu.Lock()
	delete(g.pending, method)
	if q := g.calls[method]; len(q) > 0 {
		g.calls[method] = q[1:]
	}
	g.mu.Unlock()
}

// admitCall admits a request of method when fewer than maxPendingCalls
// wait (those let through more than gateStale ago no longer count). g.mu
// is held.
func (g *inboundGate) admitCall(method string, now time.Time) bool {
	q := g.calls[method]
	for len(q) > 0 && now.Sub(q[0]) >= gateStale {
		q = q[1:]
	}
	if len(q) >= maxPendingCalls {
		g.calls[method] = q
		return false
	}
	if g.calls == nil {
		g.calls = map[string][]time.Time{}
	}
	g.calls[method] = append(q, now)
	return true
}

// middleware is the receiving middleware that tells the gate the SDK's
// handler has reached a message.
func (g *inboundGate) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		g.handled(method)
		return next(ctx, method, req)
	}
}

// install puts the gate on conn's transport, when it supports one, and on
// client's receiving path.
func (g *inboundGate) install(client *mcp.Client, conn *Conn) {
	if conn.InboundFilter == nil {
		return
	}
	conn.InboundFilter(g.admit)
	client.AddReceivingMiddleware(g.middleware)
}
