package supervisor

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

var _ catalog.ContentCaller = (*Server)(nil)

// Subscription bounds and update delivery.
const (
	// DefaultMaxSubscriptions is how many resource URIs one server may be
	// subscribed to at once when Options.MaxSubscriptions is 0.
	DefaultMaxSubscriptions = 256
	// DefaultUpdateInterval is the least time between two deliveries of
	// resource updates of one server when Options.UpdateInterval is 0.
	DefaultUpdateInterval = time.Second
	// ReasonTooManySubscriptions: Class Refused; Subscribe past
	// MaxSubscriptions (nothing is sent).
	ReasonTooManySubscriptions = "too_many_subscriptions"
)

// panicInContent is where a panic of a content request was recovered.
const panicInContent = "content request"

// GetPrompt makes one prompts/get request on the current session (see
// content).
func (s *Server) GetPrompt(ctx context.Context, r ports.GetPromptRequest) (ports.PromptResult, error) {
	return content(s, ctx, func(ctx context.Context, c *conn) (ports.PromptResult, error) {
		return c.sess.GetPrompt(ctx, r)
	})
}

// ReadResource makes one resources/read request on the current session
// (see content).
func (s *Server) ReadResource(ctx context.Context, r ports.ReadRequest) (ports.ReadResult, error) {
	return content(s, ctx, func(ctx context.Context, c *conn) (ports.ReadResult, error) {
		return c.sess.ReadResource(ctx, r)
	})
}

// Complete makes one completion/complete request on the current session
// (see content).
func (s *Server) Complete(ctx context.Context, r ports.CompleteRequest) (ports.Completion, error) {
	return content(s, ctx, func(ctx context.Context, c *conn) (ports.Completion, error) {
		return c.sess.Complete(ctx, r)
	})
}

// Subscribe subscribes the current session to updates of uri; each
// notifications/resources/updated of it reaches Options.OnResourceUpdated
// (coalesced, see Options.UpdateInterval). A subscription past
// Options.MaxSubscriptions URIs is refused, Class Refused, Reason
// "too_many_subscriptions", without contacting the server. Subscriptions
// belong to the session: after a reconnect the host subscribes again.
// Other errors as for content.
func (s *Server) Subscribe(ctx context.Context, uri string) error {
	u := s.updates
	u.mu.Lock()
	if _, ok := u.subs[uri]; !ok && len(u.subs) >= u.maxSubs {
		u.mu.Unlock()
		e := s.newErr(refusal.Refused, ReasonTooManySubscriptions)
		e.Detail = "the server has as many subscriptions as allowed"
		return e
	}
	u.mu.Unlock()
	_, err := content(s, ctx, func(ctx context.Context, c *conn) (struct{}, error) {
		if err := c.sess.Subscribe(ctx, uri); err != nil {
			return struct{}{}, err
		}
		u.mu.Lock()
		u.subs[uri] = c
		u.mu.Unlock()
		return struct{}{}, nil
	})
	return err
}

// Unsubscribe ends the current session's subscription to uri and drops
// any update of it not yet delivered. Errors as for content.
func (s *Server) Unsubscribe(ctx context.Context, uri string) error {
	_, err := content(s, ctx, func(ctx context.Context, c *conn) (struct{}, error) {
		return struct{}{}, c.sess.Unsubscribe(ctx, uri)
	})
	u := s.updates
	u.mu.Lock()
	delete(u.subs, uri)
	delete(u.pending, uri)
	u.mu.Unlock()
	return err
}

// Subscriptions returns the URIs subscribed to, sorted.
func (s *Server) Subscriptions() []string {
	u := s.updates
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Sorted(maps.Keys(u.subs))
}

// contentTimeout is the bound of a content request: the shorter of
// CallTimeout and CallTimeoutMax that is on (such a request asks for no
// progress, so nothing would restart CallTimeout's window), 0 for none.
func (s *Server) contentTimeout() time.Duration {
	switch {
	case s.callTimeout == 0:
		return s.callTimeoutMax
	case s.callTimeoutMax == 0:
		return s.callTimeout
	}
	return min(s.callTimeout, s.callTimeoutMax)
}

// content runs one content request (prompts/get, resources/read,
// completion, subscriptions) on the current session, bounded by
// contentTimeout, like Call:
// nothing is sent when the server is not Ready (Reason "server_unavailable"),
// it is never replayed, an abandoned request over stdio closes the
// session, a request that outlives the bound fails with Class Transient,
// Reason "call_timeout", the caller's ctx ending with "cancelled" or
// "timeout", and a panic in the session fails the server (Class Internal,
// "panic"). The session's refusals are returned as they are.
func content[T any](s *Server, ctx context.Context, f func(context.Context, *conn) (T, error)) (T, error) {
	var zero T
	c, err := s.enter()
	if err != nil {
		return zero, err
	}
	defer s.wg.Done()
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if d := s.contentTimeout(); d > 0 {
		cctx, cancel = context.WithTimeout(ctx, d)
	}
	defer cancel()
	stdio := s.target.Kind == ports.TransportStdio
	var rec *inflight
	if stdio {
		rec = c.track(cctx)
	}
	res, cerr, perr := func() (res T, err error, perr *refusal.Error) {
		defer func() {
			if v := recover(); v != nil {
				res, err, perr = zero, nil, s.recovered(v, panicInContent)
			}
		}()
		res, err = f(cctx, c)
		return res, err, nil
	}()
	if stdio {
		if cerr != nil && cctx.Err() != nil {
			c.recycled.Store(true)
		}
		c.untrack(rec)
	}
	if perr != nil {
		s.failPanic(c, perr)
		return zero, perr
	}
	if cerr == nil {
		return res, nil
	}
	if cctx.Err() != nil {
		if stdio {
			_ = c.close()
		}
		if ctx.Err() != nil {
			return zero, s.ctxErr(ctx)
		}
		e := s.newErr(refusal.Transient, ReasonCallTimeout)
		e.Detail = "the request outlived the call timeout"
		return zero, e
	}
	e := s.classify(cerr)
	if e.Reason == ReasonUnclassified {
		select {
		case <-c.sess.Done():
			e = s.newErr(refusal.Transient, ReasonDisconnected)
		default:
		}
	}
	return zero, e
}

// updates coalesces the resource updates of one server: each URI is
// pending at most once, whatever the server sends, and pending updates
// are delivered in one batch at most once per interval, so a flood of
// notifications costs at most one callback per subscribed URI per
// interval. Only subscribed URIs are kept.
type updates struct {
	on       func(ports.ResourceUpdate)
	interval time.Duration
	maxSubs  int

	mu      sync.Mutex
	subs    map[string]*conn // URI → the session it was subscribed on
	pending map[string]bool
	kick    chan struct{}
	started bool
}

func newUpdates(o *Options) *updates {
	u := &updates{on: o.OnResourceUpdated, interval: o.UpdateInterval, maxSubs: o.MaxSubscriptions,
		subs: map[string]*conn{}, pending: map[string]bool{}, kick: make(chan struct{}, 1)}
	if u.interval <= 0 {
		u.interval = DefaultUpdateInterval
	}
	if u.maxSubs <= 0 {
		u.maxSubs = DefaultMaxSubscriptions
	}
	return u
}

// resourceUpdated is the session's Signals.ResourceUpdated: it marks uri
// pending (when subscribed) and wakes the delivery goroutine, started on
// the first update. It never blocks.
func (s *Server) resourceUpdated(uri string) {
	u := s.updates
	if u.on == nil {
		return
	}
	u.mu.Lock()
	if _, ok := u.subs[uri]; !ok {
		u.mu.Unlock()
		return
	}
	u.pending[uri] = true
	start := !u.started
	u.started = true
	u.mu.Unlock()
	if start {
		s.mu.Lock()
		if !s.closed {
			s.wg.Add(1)
			go s.deliverUpdates()
		}
		s.mu.Unlock()
	}
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// deliverUpdates delivers pending updates until Close, one batch (sorted
// by URI) per wake-up, then waits out the interval.
func (s *Server) deliverUpdates() {
	defer s.wg.Done()
	u := s.updates
	t := time.NewTimer(u.interval)
	t.Stop()
	for {
		select {
		case <-s.life.Done():
			return
		case <-u.kick:
		}
		u.mu.Lock()
		batch := slices.Sorted(maps.Keys(u.pending))
		clear(u.pending)
		u.mu.Unlock()
		for _, uri := range batch {
			if s.life.Err() != nil {
				return
			}
			u.on(ports.ResourceUpdate{Server: s.target.ServerID, URI: uri})
		}
		t.Reset(u.interval)
		select {
		case <-s.life.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// resubscribeTimeout bounds each subscription a new session repeats.
const resubscribeTimeout = 30 * time.Second

// resubscribe repeats, on the new Ready session c, the subscriptions the
// host made on an earlier session (a server forgets them with its
// session). A URI whose subscription c refuses while c is alive is
// dropped; a panic fails the server like one in a call. It runs at the
// start of c's watch; nothing is done when there are none.
func (s *Server) resubscribe(c *conn) {
	u := s.updates
	u.mu.Lock()
	var uris []string
	for uri, on := range u.subs {
		if on != c {
			uris = append(uris, uri)
		}
	}
	u.mu.Unlock()
	slices.Sort(uris)
	for _, uri := range uris {
		ctx, cancel := context.WithTimeout(s.life, resubscribeTimeout)
		err, perr := func() (err error, perr *refusal.Error) {
			defer func() {
				if v := recover(); v != nil {
					perr = s.recovered(v, panicInContent)
				}
			}()
			return c.sess.Subscribe(ctx, uri), nil
		}()
		cancel()
		if perr != nil {
			s.failPanic(c, perr) // the session is never used again
			return
		}
		select {
		case <-c.sess.Done():
			return // the next session tries again
		default:
		}
		if s.life.Err() != nil {
			return
		}
		u.mu.Lock()
		if _, ok := u.subs[uri]; ok {
			if err != nil {
				delete(u.subs, uri)
			} else {
				u.subs[uri] = c
			}
		}
		u.mu.Unlock()
	}
}
