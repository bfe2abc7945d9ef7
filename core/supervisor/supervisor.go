package supervisor

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Defaults of Options.
const (
	DefaultMaxAttempts    = 5
	DefaultBaseDelay      = 250 * time.Millisecond
	DefaultMaxDelay       = 10 * time.Second
	DefaultConnectTimeout = 30 * time.Second
	DefaultStableAfter    = time.Minute
	// DefaultCallTimeout is how long a call may go without a progress
	// notification when Options.CallTimeout is 0.
	DefaultCallTimeout = 10 * time.Minute
	// DefaultCallTimeoutMax is how long a call may last in all when
	// Options.CallTimeoutMax is 0.
	DefaultCallTimeoutMax = time.Hour
	// DefaultCacheTTLMax and DefaultCacheTTLMin bound the refresh a
	// server's caching hint schedules (Options.CacheTTLMax, CacheTTLMin).
	DefaultCacheTTLMax = time.Hour
	DefaultCacheTTLMin = 10 * time.Second
)

// NoTimeout, as Options.ConnectTimeout, CallTimeout or CallTimeoutMax,
// turns that timeout off (so does any negative duration).
const NoTimeout time.Duration = -1

// Options configure a Server. A nil *Options, and every zero field, means
// the documented default; so does a negative field, except the three
// timeouts, where a negative value (NoTimeout) means no timeout.
type Options struct {
	// Clock is the time backoff sleeps and StableAfter are measured on;
	// nil means the system clock. ConnectTimeout, CallTimeout and
	// CallTimeoutMax run on the system clock whatever Clock is (ports.Clock
	// has no timers).
	Clock ports.Clock
	// MaxAttempts bounds both the attempts of one connect sequence and the
	// consecutive disconnects before Failed; 0 means DefaultMaxAttempts.
	MaxAttempts int
	// BaseDelay and MaxDelay shape the backoff (see the package comment);
	// 0 means DefaultBaseDelay and DefaultMaxDelay. A BaseDelay above
	// MaxDelay is capped to it.
	BaseDelay, MaxDelay time.Duration
	// Jitter returns a value in [0,1) (others are clamped to [0,1]); nil
	// means math/rand/v2's Float64. It is called from the goroutine that
	// sleeps and must be safe for concurrent use if shared.
	Jitter func() float64
	// ConnectTimeout bounds one attempt: Connector.Connect plus the first
	// discovery; 0 means DefaultConnectTimeout, NoTimeout none. An attempt
	// that outlives it fails with Class Transient, Reason
	// "connect_timeout", retried like any Transient failure — except a
	// stdio server's handshake (a process that never answers initialize),
	// which fails with Class Protocol at once.
	ConnectTimeout time.Duration
	// CallTimeout is how long a call may go without a progress
	// notification from the server for that call: each one restarts the
	// window, when the caller asked for progress (see Call); a call
	// without a progress callback gets no notification, so CallTimeout
	// bounds it in all. 0 means DefaultCallTimeout, NoTimeout none. A call that
	// times out fails with Class Transient, Reason "call_timeout", is
	// never replayed, and is abandoned like a cancelled one (over stdio
	// the session, and so the child, is closed first).
	CallTimeout time.Duration
	// CallTimeoutMax is how long a call may last in all, progress or not;
	// 0 means DefaultCallTimeoutMax, NoTimeout none. It bounds the call
	// whatever CallTimeout is (also with CallTimeout NoTimeout), and a
	// CallTimeoutMax below CallTimeout is the effective bound.
	CallTimeoutMax time.Duration
	// StableAfter is how long a session must stay up for its disconnect
	// to restart the disconnect count; 0 means DefaultStableAfter.
	StableAfter time.Duration
	// CacheTTLMax is the host's own refresh bound for the lists of a
	// modern session (protocol 2026-07-28 and later), whose pages carry
	// the server's caching hints: a catalog whose lists the server says
	// stay fresh for a positive TTL is listed again once the shortest of
	// those TTLs has passed, but never later than CacheTTLMax after it was
	// listed, whatever the server says (a ttlMs of years). 0 means
	// DefaultCacheTTLMax (1 h); NoTimeout turns the timed refresh off
	// (lists are then listed again on list_changed and Refresh only, as
	// in the legacy era).
	CacheTTLMax time.Duration
	// CacheTTLMin is the least time between two refreshes a TTL
	// schedules: a server's TTL of a millisecond is not a poll loop. 0
	// means DefaultCacheTTLMin (10 s). A TTL of 0 (stale at once, also
	// the default of a server that gives no hint) schedules nothing: a
	// host asks with Refresh when it needs the list again.
	CacheTTLMin time.Duration
	// Discover bounds every discovery (nil: catalog's defaults).
	Discover *catalog.DiscoverOptions
	// Catalog is passed to catalog.Build (nil: catalog's defaults).
	Catalog *catalog.Options
	// Logger receives one Error record per panic recovered at the
	// server's boundary (see the package comment): the server id, the
	// reason "panic", where it happened, the panic value's type and the
	// stack, never the value's text. nil discards them.
	Logger *slog.Logger
	// OnChange, when non-nil, is called with a snapshot after every change
	// of the Status (state, error, counts or catalog), in the order of the
	// changes, never concurrently with itself and never with a lock held.
	// It must not block, and must not call Close (Close waits for the
	// goroutine that runs it); Status, Catalog and other non-blocking
	// reads are fine.
	OnChange func(Status)
	// Step, when non-nil, is called as a step of the supervisor begins:
	// StepConnect (the connector's Connect of an attempt) and
	// StepDiscovery (the discovery of an attempt or of a refresh). The
	// step runs under the context Step returns (derived from the one it
	// was given, so it ends as that one does), and the func Step returns
	// is called once as the step ends, with its error or nil (not when a
	// panic ends it). It is how a host traces the steps; it must not
	// block. nil costs nothing.
	Step func(ctx context.Context, step string) (context.Context, func(error))
	// OnResourceUpdated, when non-nil, is called with every resource
	// update of a subscribed URI (see Subscribe), from a goroutine of the
	// server, never concurrently with itself: updates are coalesced per
	// URI and delivered in batches at most once per UpdateInterval. It is
	// a signal for the host, never a turn; it must not block for long and
	// must not call Close.
	OnResourceUpdated func(ports.ResourceUpdate)
	// UpdateInterval is the least time between two batches of resource
	// updates; 0 means DefaultUpdateInterval.
	UpdateInterval time.Duration
	// MaxSubscriptions bounds the URIs subscribed to at once; 0 means
	// DefaultMaxSubscriptions.
	MaxSubscriptions int
}

// Server supervises the connection to one server. All methods are safe for
// concurrent use.
type Server struct {
	connector ports.Connector
	target    ports.Target

	clock          ports.Clock
	maxAttempts    int
	baseDelay      time.Duration
	maxDelay       time.Duration
	jitter         func() float64
	connectTimeout time.Duration // 0: none
	callTimeout    time.Duration // 0: none
	callTimeoutMax time.Duration // 0: none
	cacheMax       time.Duration // 0: no timed refresh
	cacheMin       time.Duration
	stableAfter    time.Duration
	discover       *catalog.DiscoverOptions
	catOpts        *catalog.Options
	logger         *slog.Logger
	onChange       func(Status)
	step           func(context.Context, string) (context.Context, func(error))
	updates        *updates

	// life ends on Close; every background goroutine and every attempt
	// runs under it.
	life   context.Context
	cancel context.CancelFunc
	// wg counts every goroutine and every caller's operation that uses a
	// session: background watchers and reconnects, Connect sequences,
	// Calls and Refreshes. Close waits for it.
	wg sync.WaitGroup
	// sem serializes discoveries of refreshes (one at a time).
	sem chan struct{}
	// closeDone is closed when Close has finished.
	closeDone chan struct{}
	// closedWhy is the refusal of every use after CloseWith (nil after
	// Close): set once, before closed, under mu.
	closedWhy atomic.Pointer[refusal.Error]

	mu          sync.Mutex
	closed      bool
	state       State
	err         *refusal.Error
	attempts    int
	disconnects int
	cat         *catalog.Catalog
	cur         *conn // the Ready session, nil otherwise
	seq         *sequence
	pending     []Status // notifications not yet delivered
	delivering  bool
}

var _ catalog.Caller = (*Server)(nil)

// A Server is the catalog.CatalogSource of the tools of its catalogs: a
// call through a tool of an older catalog of this server whose tool has
// since changed or vanished is refused by name (catalog.ReasonToolChanged,
// catalog.ReasonToolRemoved) before anything is validated or sent.
var _ catalog.CatalogSource = (*Server)(nil)

// conn is one session the supervisor opened.
type conn struct {
	sess ports.Session
	id   ports.SessionIdentity
	kick chan struct{} // one pending list_changed refresh
	up   time.Time     // Clock time it became Ready

	// recycled says the supervisor closed it itself after an abandoned
	// stdio call: its end is not a disconnect.
	recycled  atomic.Bool
	closeOnce sync.Once
	closeErr  error

	// calls are the in-flight stdio calls, so the end of a session an
	// adapter closed itself for an abandoned call is not counted either,
	// whichever of Call and the watcher sees it first.
	callsMu sync.Mutex
	calls   map[*inflight]struct{}
}

// inflight is one stdio call in progress.
type inflight struct{ ctx context.Context }

// track registers an in-flight call; untrack removes it.
func (c *conn) track(ctx context.Context) *inflight {
	rec := &inflight{ctx: ctx}
	c.callsMu.Lock()
	if c.calls == nil {
		c.calls = make(map[*inflight]struct{})
	}
	c.calls[rec] = struct{}{}
	c.callsMu.Unlock()
	return rec
}

func (c *conn) untrack(rec *inflight) {
	c.callsMu.Lock()
	delete(c.calls, rec)
	c.callsMu.Unlock()
}

// abandoned reports whether c was closed for an abandoned call: by Call,
// or (an in-flight call's ctx has ended) by the adapter itself.
func (c *conn) abandoned() bool {
	if c.recycled.Load() {
		return true
	}
	c.callsMu.Lock()
	defer c.callsMu.Unlock()
	for rec := range c.calls {
		if rec.ctx.Err() != nil {
			return true
		}
	}
	return false
}

// close closes the session once; later calls return the first result.
func (c *conn) close() error {
	c.closeOnce.Do(func() { c.closeErr = c.sess.Close() })
	return c.closeErr
}

// sequence is one running connect sequence; Connect callers join it.
type sequence struct {
	done chan struct{} // closed when it ended
	// set before done is closed:
	err       *refusal.Error // nil when it ended Ready
	cancelled bool           // it ended because its ctx ended
}

// New returns an Idle Server for target t, connected through c. It starts
// nothing: Connect does.
func New(c ports.Connector, t ports.Target, opts *Options) *Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &Server{
		connector:      c,
		target:         t,
		clock:          o.Clock,
		maxAttempts:    o.MaxAttempts,
		baseDelay:      o.BaseDelay,
		maxDelay:       o.MaxDelay,
		jitter:         o.Jitter,
		connectTimeout: timeout(o.ConnectTimeout, DefaultConnectTimeout),
		callTimeout:    timeout(o.CallTimeout, DefaultCallTimeout),
		callTimeoutMax: timeout(o.CallTimeoutMax, DefaultCallTimeoutMax),
		stableAfter:    o.StableAfter,
		cacheMax:       timeout(o.CacheTTLMax, DefaultCacheTTLMax),
		cacheMin:       timeout(o.CacheTTLMin, DefaultCacheTTLMin),
		discover:       o.Discover,
		catOpts:        o.Catalog,
		logger:         o.Logger,
		onChange:       o.OnChange,
		step:           o.Step,
		updates:        newUpdates(&o),
		sem:            make(chan struct{}, 1),
		closeDone:      make(chan struct{}),
	}
	if s.clock == nil {
		s.clock = realClock{}
	}
	if s.maxAttempts <= 0 {
		s.maxAttempts = DefaultMaxAttempts
	}
	if s.baseDelay <= 0 {
		s.baseDelay = DefaultBaseDelay
	}
	if s.maxDelay <= 0 {
		s.maxDelay = DefaultMaxDelay
	}
	if s.baseDelay > s.maxDelay {
		s.baseDelay = s.maxDelay
	}
	if s.jitter == nil {
		s.jitter = rand.Float64
	}
	if s.stableAfter <= 0 {
		s.stableAfter = DefaultStableAfter
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.life, s.cancel = context.WithCancel(context.Background())
	return s
}

// timeout returns the timeout an option asks for: def for 0, 0 (none) for
// a negative value, d otherwise.
func timeout(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// Status returns a snapshot of the server's state.
func (s *Server) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statusLocked()
}

// Catalog returns the retained catalog (possibly Stale or partial), or nil.
// The catalog is shared and read-only.
func (s *Server) Catalog() *catalog.Catalog {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cat
}

// Connect connects the server and returns nil once it is Ready, or the
// *refusal.Error that ended the attempt in Failed (its Class says what to
// do; see the package comment). It blocks through backoff sleeps. Ready
// after a first discovery that failed is still nil: Status().Err and the
// catalog's Partial marks say what is missing.
//
// From Idle or Failed it starts a new sequence of at most MaxAttempts
// attempts and resets the disconnect count. When Ready it returns nil at
// once. When a sequence is already running (another Connect, or a
// background reconnect) it waits for that sequence's outcome instead of
// starting another one. If ctx ends first, Connect returns Class Transient,
// Reason "cancelled" or "timeout"; a sequence this call started is then
// abandoned (its session, if any, closed) and the server is Idle, while a
// sequence it only joined goes on. After Close it returns Class Internal,
// Reason "closed"; Close during Connect makes Connect return that too. A
// panic during an attempt ends it in Failed with Class Internal, Reason
// "panic" (see the package comment).
func (s *Server) Connect(ctx context.Context) error {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return s.errClosed()
		}
		if s.state == Ready {
			s.mu.Unlock()
			return nil
		}
		if q := s.seq; q != nil {
			s.mu.Unlock()
			select {
			case <-q.done:
			case <-ctx.Done():
				return s.ctxErr(ctx)
			}
			if q.cancelled {
				continue // Close (seen above) or its owner gave up: look again
			}
			if q.err != nil {
				return q.err
			}
			return nil
		}
		if err := ctx.Err(); err != nil {
			s.mu.Unlock()
			return s.ctxErr(ctx)
		}
		q := &sequence{done: make(chan struct{})}
		s.seq = q
		s.attempts = 0
		s.disconnects = 0
		s.wg.Add(1)
		s.mu.Unlock()

		rctx, cancel := context.WithCancel(ctx)
		stop := context.AfterFunc(s.life, cancel)
		s.run(rctx, q, 0)
		stop()
		cancel()
		switch {
		case q.cancelled && s.isClosed():
			return s.errClosed()
		case q.cancelled:
			return s.ctxErr(ctx)
		case q.err != nil:
			return q.err
		}
		return nil
	}
}

// run performs the attempts of sequence q under ctx until one succeeds
// (Ready), a failure needs a caller (Failed) or ctx ends (Idle, or Closed).
// n > 0 asks for a backoff sleep for the n-th failure before the first
// attempt. The caller has registered q as s.seq and added run to s.wg.
func (s *Server) run(ctx context.Context, q *sequence, n int) {
	defer s.wg.Done()
	attempts := 0
	for {
		if n > 0 {
			d := backoff(n, s.baseDelay, s.maxDelay, s.jitter())
			if err := s.clock.Sleep(ctx, d); err != nil {
				if ctx.Err() != nil {
					s.endCancelled(ctx, q)
					return
				}
				e := s.newErr(refusal.Internal, ReasonClockFailed)
				s.endFailed(q, e, attempts)
				return
			}
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			s.endCancelled(ctx, q)
			return
		}
		s.state = Connecting
		s.publishLocked()
		s.unlockNotify()

		c, cat, derr, err := s.attempt(ctx)
		if err == nil {
			s.endReady(ctx, q, c, cat, derr)
			return
		}
		if ctx.Err() != nil {
			s.endCancelled(ctx, q)
			return
		}
		attempts++
		if err.Class != refusal.Transient || attempts >= s.maxAttempts {
			s.endFailed(q, err, attempts)
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			s.endCancelled(ctx, q)
			return
		}
		s.attempts = attempts
		s.err = err
		s.state = Backoff
		n = s.disconnects + attempts
		s.publishLocked()
		s.unlockNotify()
	}
}

// attempt opens a session and discovers its lists. It returns the session
// and its catalog, with derr the failure of the discovery when the session
// is kept despite it; or err, the failure of the attempt (its session
// closed). When ctx has ended it returns some non-nil err.
//
// A panic in the attempt (in the Connector, the session's List, the
// discovery or the catalog building) is recovered here: its session, if
// any, is closed and err is Class Internal, Reason "panic".
func (s *Server) attempt(ctx context.Context) (c *conn, cat *catalog.Catalog, derr, err *refusal.Error) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if s.connectTimeout > 0 {
		actx, cancel = context.WithTimeout(ctx, s.connectTimeout)
	}
	defer cancel()

	var sess ports.Session
	defer func() {
		if v := recover(); v != nil {
			e := s.recovered(v, panicInConnect)
			switch {
			case c != nil:
				_ = c.close()
			case sess != nil:
				_ = sess.Close()
			}
			c, cat, derr, err = nil, nil, nil, e
		}
	}()

	kick := make(chan struct{}, 1)
	sig := ports.Signals{ListChanged: func(ports.ListKind) {
		select {
		case kick <- struct{}{}:
		default: // one refresh is already pending: coalesced
		}
	}, ResourceUpdated: s.resourceUpdated}
	cctx, endConnect := s.begin(actx, StepConnect)
	sess, cerr := s.connector.Connect(cctx, s.target, sig)
	endConnect(cerr)
	if cerr != nil {
		if sess != nil {
			_ = sess.Close()
			sess = nil
		}
		return nil, nil, nil, s.silentStdio(s.attemptErr(ctx, actx, cerr))
	}
	if sess == nil {
		return nil, nil, nil, s.newErr(refusal.Internal, ReasonNoSession)
	}
	c = &conn{sess: sess, id: sess.Identity(), kick: kick}
	fail := func(e *refusal.Error) (*conn, *catalog.Catalog, *refusal.Error, *refusal.Error) {
		_ = c.close()
		c = nil
		return nil, nil, nil, e
	}

	// The identity is known: a retained catalog of another identity is
	// dropped now, before discovery, so it is never served beside this
	// session.
	s.mu.Lock()
	if s.cat != nil && !sameIdentity(s.cat.Identity, c.id) {
		s.cat = nil
		s.publishLocked()
	}
	s.unlockNotify()

	dctx, endDiscovery := s.begin(actx, StepDiscovery)
	lists, dErr := catalog.Discover(dctx, sess, s.discover)
	endDiscovery(dErr)
	if dErr != nil {
		if ctx.Err() != nil || actx.Err() != nil {
			return fail(s.attemptErr(ctx, actx, dErr))
		}
		select {
		case <-sess.Done():
			return fail(s.newErr(refusal.Transient, ReasonDisconnected))
		default:
		}
		derr = s.classify(dErr)
		s.mu.Lock()
		old := s.cat // same identity here, or nil
		s.mu.Unlock()
		if old != nil {
			return c, old.MarkStale(), derr, nil
		}
	}
	return c, catalog.Build(s.target.ServerID, c.id, lists, s, s.catOpts), derr, nil
}

// attemptErr classifies the failure err of an attempt running under actx,
// derived from the sequence's ctx. When the attempt's own timeout ended
// it, a Transient or unclassified failure (the connector's view of its
// ended ctx, or of the connection that ending tore down) becomes
// ReasonConnectTimeout; a failure of another class is kept, since the
// connector says it is not about time.
func (s *Server) attemptErr(ctx, actx context.Context, err error) *refusal.Error {
	if ctx.Err() != nil {
		return s.ctxErr(ctx)
	}
	e := s.classify(err)
	if actx.Err() != nil && (e.Class == refusal.Transient || e.Reason == ReasonUnclassified) {
		e = s.newErr(refusal.Transient, ReasonConnectTimeout)
		e.Detail = "the connect attempt outlived the connect timeout"
	}
	return e
}

// silentStdio turns the connect timeout of a stdio server's handshake —
// a process that started but never answered initialize — into Class
// Protocol (Reason still ReasonConnectTimeout): starting the same program
// again with the same input would be as silent, so it is one attempt, not
// MaxAttempts of a whole connect timeout each. Any other error is
// returned as it is.
func (s *Server) silentStdio(e *refusal.Error) *refusal.Error {
	if e.Reason != ReasonConnectTimeout || e.Class != refusal.Transient || s.target.Kind != ports.TransportStdio {
		return e
	}
	c := *e
	c.Class = refusal.Protocol
	c.Detail = "the stdio server never answered initialize within the connect timeout (not retried)"
	return &c
}

// sameIdentity reports whether two sessions are the same server for the
// purpose of a retained catalog.
func sameIdentity(a, b ports.SessionIdentity) bool {
	return a.ServerID == b.ServerID && a.ProtocolVersion == b.ProtocolVersion &&
		a.ServerVersion == b.ServerVersion
}

// endReady installs c and its catalog and starts watching c.
func (s *Server) endReady(ctx context.Context, q *sequence, c *conn, cat *catalog.Catalog, derr *refusal.Error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = c.close()
		s.endCancelled(ctx, q)
		return
	}
	c.up = s.clock.Now()
	s.cur = c
	s.cat = cat
	s.err = derr
	s.attempts = 0
	s.state = Ready
	s.seq = nil
	s.wg.Add(1)
	go s.watch(c)
	close(q.done)
	s.publishLocked()
	s.unlockNotify()
}

// endFailed ends q in Failed with err.
func (s *Server) endFailed(q *sequence, err *refusal.Error, attempts int) {
	s.mu.Lock()
	if s.closed {
		q.cancelled = true
		s.seq = nil
		close(q.done)
		s.mu.Unlock()
		return
	}
	q.err = err
	s.err = err
	s.attempts = attempts
	s.state = Failed
	s.seq = nil
	close(q.done)
	s.publishLocked()
	s.unlockNotify()
}

// endCancelled ends q because its ctx ended: Idle, unless Close did it.
func (s *Server) endCancelled(ctx context.Context, q *sequence) {
	s.mu.Lock()
	q.cancelled = true
	s.seq = nil
	close(q.done)
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.err = s.ctxErr(ctx)
	s.state = Idle
	s.publishLocked()
	s.unlockNotify()
}

// watch runs while c is the Ready session: it performs the coalesced
// list_changed refreshes and the refreshes the catalog's caching hints
// schedule (refreshAfter), and turns the end of c into a reconnect.
func (s *Server) watch(c *conn) {
	defer s.wg.Done()
	s.resubscribe(c)
	var timer *time.Timer
	var expired <-chan time.Time
	arm := func() {
		d, ok := s.refreshAfter()
		if !ok {
			expired = nil
			return
		}
		if timer == nil {
			timer = time.NewTimer(d)
		} else {
			timer.Reset(d)
		}
		expired = timer.C
	}
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	arm()
	for {
		select {
		case <-s.life.Done():
			return
		case <-c.sess.Done():
			s.lost(c)
			return
		case <-c.kick:
		case <-expired:
		}
		select {
		case <-c.sess.Done():
			continue // handled by the next round
		default:
		}
		// A failed refresh keeps the catalog, stale, with its hints: the
		// next one comes after the same time again.
		_ = s.refresh(s.life, c)
		arm()
	}
}

// refreshAfter returns how long the current catalog is fresh for by its
// caching hints (the shortest positive TTL of its lists, within
// [cacheMin, cacheMax]), and false when nothing is to be refreshed for
// time: no catalog, no hints (a legacy session), only TTLs of 0, or the
// timed refresh turned off.
func (s *Server) refreshAfter() (time.Duration, bool) {
	if s.cacheMax <= 0 {
		return 0, false
	}
	s.mu.Lock()
	cat := s.cat
	s.mu.Unlock()
	if cat == nil {
		return 0, false
	}
	var d time.Duration
	for _, h := range cat.Cache {
		if h.TTL > 0 && (d == 0 || h.TTL < d) {
			d = h.TTL
		}
	}
	if d == 0 {
		return 0, false
	}
	return min(max(d, s.cacheMin), s.cacheMax), true
}

// lost handles the end of the Ready session c that the supervisor did not
// close for Close: the disconnect count, then Failed or a reconnect in this
// goroutine.
func (s *Server) lost(c *conn) {
	s.mu.Lock()
	if s.closed || s.cur != c {
		s.mu.Unlock()
		_ = c.close()
		return
	}
	s.cur = nil
	if s.cat != nil && !s.cat.Stale {
		s.cat = s.cat.MarkStale()
	}
	n := 0
	if !c.abandoned() {
		if s.clock.Now().Sub(c.up) >= s.stableAfter {
			s.disconnects = 0
		}
		s.disconnects++
		s.err = s.newErr(refusal.Transient, ReasonDisconnected)
		s.attempts = 0
		if s.disconnects >= s.maxAttempts {
			s.state = Failed
			s.publishLocked()
			s.unlockNotify()
			_ = c.close()
			return
		}
		n = s.disconnects
		s.state = Backoff
	} else {
		s.state = Connecting
	}
	q := &sequence{done: make(chan struct{})}
	s.seq = q
	s.wg.Add(1)
	s.publishLocked()
	s.unlockNotify()
	// Release what the lost session still holds (reap a stdio child)
	// before a new one is opened. This waits for its in-flight calls,
	// which a lost session ends.
	_ = c.close()
	s.run(s.life, q, n)
}

// Refresh discovers the lists of the current session again now and
// installs the new catalog. Refreshes never overlap: it first waits for a
// running one. It returns nil on success (the catalog may still be partial:
// see Catalog.Partial). On failure it keeps the previous catalog, marked
// stale, records the failure in Status.Err and returns it. When the server
// is not Ready it returns ReasonServerUnavailable (see Call); if the session is
// lost meanwhile, Class Transient, Reason "disconnected". If ctx ends first
// it returns Class Transient "cancelled" or "timeout" and changes nothing.
// After Close it returns Class Internal "closed". A panic during the
// discovery or the catalog building returns Class Internal "panic", and
// the server is then Failed, its session closed (see the package comment).
func (s *Server) Refresh(ctx context.Context) error {
	c, err := s.enter()
	if err != nil {
		return err
	}
	defer s.wg.Done()
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.life, cancel)
	defer stop()
	if e := s.refresh(rctx, c); e != nil {
		if s.isClosed() {
			return s.errClosed()
		}
		if ctx.Err() != nil {
			return s.ctxErr(ctx)
		}
		return e
	}
	return nil
}

// refresh runs one discovery of c under ctx and applies it (see Refresh).
// A panic in the discovery or the catalog building fails the server (see
// failPanic) and is returned as Class Internal, Reason "panic".
func (s *Server) refresh(ctx context.Context, c *conn) *refusal.Error {
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return s.ctxErr(ctx)
	case <-c.sess.Done():
		return s.newErr(refusal.Transient, ReasonDisconnected)
	}
	defer func() { <-s.sem }()

	cat, dErr, perr := s.rediscover(ctx, c)
	if perr != nil {
		s.failPanic(c, perr)
		return perr
	}
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return s.errClosed()
	case s.cur != c:
		s.mu.Unlock()
		return s.newErr(refusal.Transient, ReasonDisconnected)
	case dErr == nil:
		s.cat = cat
		s.err = nil
		s.publishLocked()
		s.unlockNotify()
		return nil
	case ctx.Err() != nil:
		s.mu.Unlock()
		return s.ctxErr(ctx)
	}
	e := s.classify(dErr)
	select {
	case <-c.sess.Done():
		e = s.newErr(refusal.Transient, ReasonDisconnected)
	default:
	}
	s.err = e
	if s.cat != nil {
		s.cat = s.cat.MarkStale()
	}
	s.publishLocked()
	s.unlockNotify()
	return e
}

// The steps Options.Step is told of.
const (
	// StepConnect is the connector's Connect of an attempt (the
	// handshake).
	StepConnect = "connect"
	// StepDiscovery is the discovery of the lists of a session, at an
	// attempt or a refresh.
	StepDiscovery = "discovery"
)

// begin calls Options.Step for step under ctx, or returns ctx and a func
// doing nothing when there is none.
func (s *Server) begin(ctx context.Context, step string) (context.Context, func(error)) {
	if s.step == nil {
		return ctx, noStep
	}
	return s.step(ctx, step)
}

func noStep(error) {}

// rediscover discovers the lists of c again and builds their catalog (nil
// when the discovery failed with dErr). A panic in either is recovered and
// returned as perr.
func (s *Server) rediscover(ctx context.Context, c *conn) (cat *catalog.Catalog, dErr error, perr *refusal.Error) {
	defer func() {
		if v := recover(); v != nil {
			cat, dErr, perr = nil, nil, s.recovered(v, panicInRefresh)
		}
	}()
	dctx, endDiscovery := s.begin(ctx, StepDiscovery)
	lists, dErr := catalog.Discover(dctx, c.sess, s.discover)
	endDiscovery(dErr)
	if dErr == nil {
		cat = catalog.Build(s.target.ServerID, c.id, lists, s, s.catOpts)
	}
	return cat, dErr, nil
}

// enter returns the Ready session for one Call or Refresh and adds the
// operation to s.wg, or the error that says why there is none.
func (s *Server) enter() (*conn, *refusal.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, s.errClosed()
	}
	// A stdio session being recycled for an abandoned call (the caller's
	// cancel ended it, its close may not have begun yet) is not Ready:
	// nothing is sent on it.
	if s.state != Ready || s.cur == nil || (s.target.Kind == ports.TransportStdio && s.cur.abandoned()) {
		class := refusal.Transient
		if s.state == Failed && s.err != nil {
			class = s.err.Class
		}
		e := s.newErr(class, ReasonServerUnavailable)
		e.Detail = "the server is not connected"
		return nil, e
	}
	s.wg.Add(1)
	return s.cur, nil
}

// Call makes one tool call on the current session and never replays it.
//
// When the server is not Ready nothing is sent and Call returns Reason
// "server_unavailable": Class Transient in Idle, Connecting and Backoff (and
// over stdio while the session is closed for an abandoned call: from the
// caller's cancel on, before the reconnect shows in Status), and in
// Failed the Class of the failure that ended there (Status().Err), so a
// caller branching on the class does the same as for Connect. After Close:
// Class Internal, Reason "closed".
//
// The call is bounded by Options.CallTimeout and Options.CallTimeoutMax; a
// call that outlives them is abandoned and Call returns Class Transient,
// Reason "call_timeout". The caller asks for progress with a progress
// callback: r.OnProgress or, when that is nil, ports.ProgressFunc(ctx)
// (how a host calling through a ports.Tool asks). Only then does the call
// carry a progress token (the server has nothing to report progress
// against otherwise), and then every progress notification of the call
// restarts its CallTimeout window (CallTimeoutMax still caps it). Without
// a callback CallTimeout bounds the whole call. The callback is called from a
// goroutine of Call, never concurrently with itself and never after Call
// has returned; notifications that arrive while it runs are coalesced, so
// it sees the latest one (not necessarily each). It should return quickly:
// Call waits for a running callback before it returns.
//
// A failure of the session's Call is returned as a *refusal.Error (an
// unclassified one becomes Class Transient "disconnected" when the session
// ended meanwhile, Internal "unclassified_error" otherwise). When the call
// failed and ctx has ended (the call was abandoned), Call returns Class
// Transient "cancelled" or "timeout": the caller's ending is never
// reported as "call_timeout". An abandoned call (by ctx or by the call
// timeouts) over stdio first closes the session (see the package comment),
// so no request is left running in the child. A result the session
// returned is returned even if ctx ended or the timeout passed meanwhile.
//
// A panic in the session's Call is recovered: Call returns Class Internal,
// Reason "panic", and the server is Failed with that error, its session
// closed (see the package comment).
func (s *Server) Call(ctx context.Context, r ports.CallRequest) (ports.CallResult, error) {
	c, err := s.enter()
	if err != nil {
		return ports.CallResult{}, err
	}
	defer s.wg.Done()
	user := r.OnProgress
	if user == nil {
		user = ports.ProgressFunc(ctx)
	}
	cctx := ctx
	r.OnProgress = nil
	if user == nil {
		// No progress: nothing restarts the bound, a plain timer is the
		// whole window (callwindow.go's window without its allocation).
		if d := s.plainBound(); d > 0 {
			var cancel context.CancelFunc
			cctx, cancel = context.WithCancel(ctx)
			t := time.AfterFunc(d, cancel)
			defer func() {
				t.Stop()
				cancel()
			}()
		}
	} else if w := s.openWindow(ctx, user); w != nil {
		defer w.stop()
		cctx = w.ctx
		if user != nil {
			r.OnProgress = w.progress
		}
	}
	stdio := s.target.Kind == ports.TransportStdio
	var rec *inflight
	if stdio {
		rec = c.track(cctx)
	}
	res, cerr, perr := s.sessionCall(cctx, c, r)
	if stdio {
		if cerr != nil && cctx.Err() != nil {
			c.recycled.Store(true)
		}
		c.untrack(rec)
	}
	if perr != nil {
		s.failPanic(c, perr)
		return ports.CallResult{}, perr
	}
	if cerr == nil {
		return res, nil
	}
	if cctx.Err() != nil {
		if stdio {
			_ = c.close()
		}
		if ctx.Err() != nil {
			return ports.CallResult{}, s.ctxErr(ctx)
		}
		e := s.newErr(refusal.Transient, ReasonCallTimeout)
		e.Detail = "the call outlived the call timeout"
		return ports.CallResult{}, e
	}
	e := s.classify(cerr)
	if e.Reason == ReasonUnclassified {
		select {
		case <-c.sess.Done():
			e = s.newErr(refusal.Transient, ReasonDisconnected)
		default:
		}
	}
	return ports.CallResult{}, e
}

// sessionCall makes the call r on c's session under ctx; a panic in it is
// recovered and returned as perr.
func (s *Server) sessionCall(ctx context.Context, c *conn, r ports.CallRequest) (res ports.CallResult, err error, perr *refusal.Error) {
	defer func() {
		if v := recover(); v != nil {
			res, err, perr = ports.CallResult{}, nil, s.recovered(v, panicInCall)
		}
	}()
	res, err = c.sess.Call(ctx, r)
	return res, err, nil
}

// Close ends everything: it cancels the running sequence and background
// refreshes, closes the session (ending in-flight calls), drops the catalog
// and the last failure (Closed holds none, so OnChange never hears a
// failure again from Close) and waits until every goroutine and operation
// of the server has returned. Every later use fails with Class Internal,
// Reason "closed" (see CloseWith). It returns the session's Close failure
// as a *refusal.Error, or nil. It is idempotent: a later call waits for
// the first to finish and returns nil. Close relies on the Connector and
// sessions returning once their ctx ends.
func (s *Server) Close() error { return s.CloseWith(nil) }

// CloseWith is Close, and every later use of the server (Connect, Call,
// Refresh, the content requests, and so the tools of its catalogs) fails
// with a copy of why carrying the server's id, instead of Class Internal
// "closed": the owner that closes a server for a reason of its own (a
// composition Fleet closed, or the server removed from it) says so, in a
// class the caller can branch on. A nil why is Close. Only the first
// Close or CloseWith of a server decides; later ones wait for it and
// return nil.
func (s *Server) CloseWith(why *refusal.Error) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.closeDone
		return nil
	}
	if why != nil {
		c := *why
		s.closedWhy.Store(&c)
	}
	s.closed = true
	c := s.cur
	s.cur = nil
	s.cat = nil
	s.err = nil
	s.state = Closed
	s.publishLocked()
	s.unlockNotify()

	s.cancel()
	var err error
	if c != nil {
		if cerr := c.close(); cerr != nil {
			err = s.classify(cerr)
		}
	}
	s.wg.Wait()
	close(s.closeDone)
	return err
}

// isClosed reports whether Close was called.
func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// statusLocked returns a snapshot. s.mu is held.
func (s *Server) statusLocked() Status {
	return Status{
		Server:      s.target.ServerID,
		State:       s.state,
		Err:         s.err,
		Attempts:    s.attempts,
		Disconnects: s.disconnects,
		Catalog:     s.cat,
	}
}

// publishLocked queues a snapshot for OnChange. s.mu is held.
func (s *Server) publishLocked() {
	if s.onChange != nil {
		s.pending = append(s.pending, s.statusLocked())
	}
}

// unlockNotify unlocks s.mu and delivers the queued snapshots, unless
// another goroutine is delivering (it will deliver them too, in order).
func (s *Server) unlockNotify() {
	if s.delivering || len(s.pending) == 0 {
		s.mu.Unlock()
		return
	}
	s.delivering = true
	for len(s.pending) > 0 {
		batch := s.pending
		s.pending = nil
		s.mu.Unlock()
		for _, st := range batch {
			s.onChange(st)
		}
		s.mu.Lock()
	}
	s.delivering = false
	s.mu.Unlock()
}
