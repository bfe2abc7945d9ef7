package supervisor

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	serverID = "srv"
	// wait bounds every wait of a test for something the code under test
	// does in another goroutine; it is never slept.
	wait = 10 * time.Second
)

var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// identity returns the identity of a scripted server of version v.
func identity(v string) ports.SessionIdentity {
	return ports.SessionIdentity{
		ProtocolVersion: "2025-11-25",
		ServerName:      "fake",
		ServerVersion:   v,
		Declared:        []ports.ListKind{ports.ListTools},
	}
}

// script returns a session script of version v listing the named tools on
// one page.
func script(v string, tools ...string) portstest.SessionScript {
	page := ports.Page{}
	for _, n := range tools {
		page.Tools = append(page.Tools, ports.ToolItem{
			Name:        n,
			InputSchema: map[string]any{"type": "object"},
		})
	}
	return portstest.SessionScript{
		Identity: identity(v),
		Pages:    map[ports.ListKind]map[string]ports.Page{ports.ListTools: {"": page}},
	}
}

// recClock is a portstest.Clock that records the durations it is asked to
// sleep.
type recClock struct {
	*portstest.Clock
	mu     sync.Mutex
	sleeps []time.Duration
}

func newClock() *recClock { return &recClock{Clock: portstest.NewClock(epoch)} }

func (c *recClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.mu.Unlock()
	return c.Clock.Sleep(ctx, d)
}

func (c *recClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.sleeps)
}

// blockUntil waits until n sleeps are blocked.
func (c *recClock) blockUntil(t *testing.T, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, c.BlockUntil(ctx, n), "waiting for %d sleepers", n)
}

// recorder collects OnChange snapshots and lets a test wait for a status.
type recorder struct {
	mu      sync.Mutex
	all     []Status
	changed chan struct{}
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) OnChange(st Status) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, st)
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *recorder) snapshots() []Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.all)
}

func (r *recorder) states() []State {
	var out []State
	for _, st := range r.snapshots() {
		if len(out) == 0 || out[len(out)-1] != st.State {
			out = append(out, st.State)
		}
	}
	return out
}

// await waits until pred holds for s.Status(); it re-checks after every
// change the recorder sees.
func (r *recorder) await(t *testing.T, s *Server, what string, pred func(Status) bool) Status {
	t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		r.mu.Lock()
		ch := r.changed
		r.mu.Unlock()
		if st := s.Status(); pred(st) {
			return st
		}
		select {
		case <-ch:
		case <-timer.C:
			t.Fatalf("timed out waiting for %s; status %s", what, describe(s.Status()))
		}
	}
}

func (r *recorder) awaitState(t *testing.T, s *Server, want State) Status {
	t.Helper()
	return r.await(t, s, "state "+want.String(), func(st Status) bool { return st.State == want })
}

// describe renders a status for failure messages (all secret-free).
func describe(st Status) string {
	e := "<nil>"
	if st.Err != nil {
		e = st.Err.Error()
	}
	return st.State.String() + " err=" + e
}

// fixture is one Server on a scripted connector and a fake clock.
type fixture struct {
	conn  *portstest.Connector
	clock *recClock
	rec   *recorder
	srv   *Server
}

// newFixture builds a Server; opts may be nil; its Clock and OnChange are
// set by the fixture. The server is closed at cleanup.
func newFixture(t *testing.T, sc portstest.SessionScript, kind ports.TransportKind, opts *Options) *fixture {
	t.Helper()
	return newFixtureOn(t, portstest.NewConnector(sc), kind, opts)
}

func newFixtureOn(t *testing.T, c *portstest.Connector, kind ports.TransportKind, opts *Options) *fixture {
	t.Helper()
	f := &fixture{conn: c, clock: newClock(), rec: newRecorder()}
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Clock = f.clock
	o.OnChange = f.rec.OnChange
	if o.Jitter == nil {
		o.Jitter = func() float64 { return 0.5 }
	}
	f.srv = New(c, ports.Target{ServerID: serverID, Kind: kind}, &o)
	t.Cleanup(func() { _ = f.srv.Close() })
	return f
}

// connect connects and requires success.
func (f *fixture) connect(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, f.srv.Connect(ctx))
	require.Equal(t, Ready, f.srv.Status().State)
}

// connectAsync runs Connect in a goroutine and returns its result channel.
func (f *fixture) connectAsync(ctx context.Context) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f.srv.Connect(ctx) }()
	return ch
}

// session returns the i-th session the connector opened.
func (f *fixture) session(t *testing.T, i int) *portstest.Session {
	t.Helper()
	ss := f.conn.Sessions()
	require.Greater(t, len(ss), i, "session %d was not opened", i)
	return ss[i]
}

// closeWithin closes s and fails the test if Close does not return.
func closeWithin(t *testing.T, s *Server) error {
	t.Helper()
	ch := make(chan error, 1)
	go func() { ch <- s.Close() }()
	return recv(t, ch)
}

// recv waits for one value of ch.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatal("timed out waiting for a result")
		panic("unreachable")
	}
}

// requireRefusal requires err to be a *refusal.Error of class and reason
// for the test's server.
func requireRefusal(t *testing.T, err error, class refusal.Class, reason string) *refusal.Error {
	t.Helper()
	require.Error(t, err)
	e, ok := err.(*refusal.Error)
	require.True(t, ok, "error is %T, not *refusal.Error", err)
	require.Equal(t, class, e.Class, "class of %v", err)
	require.Equal(t, reason, e.Reason, "reason of %v", err)
	require.Equal(t, serverID, e.Server)
	return e
}

// gate is a switchable barrier for a wrapped session's List.
type gate struct {
	mu sync.Mutex
	// mode (set with configure before hold):
	ignoreCtx bool               // blocked Lists ignore their ctx, as a misbehaving session might
	after     bool               // block after the server answered, not before
	only      *portstest.Session // when non-nil, only this session's Lists are gated
	closed    bool
	open      chan struct{} // closed to let blocked Lists through
	entered   chan struct{} // one value per List that blocked
}

func newGate() *gate {
	return &gate{open: make(chan struct{}), entered: make(chan struct{}, 10000)}
}

// configure sets the gate's mode.
func (g *gate) configure(ignoreCtx, after bool, only *portstest.Session) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ignoreCtx, g.after, g.only = ignoreCtx, after, only
}

// hold makes later Lists block until release.
func (g *gate) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	g.open = make(chan struct{})
}

// release lets blocked and later Lists through.
func (g *gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		g.closed = false
		close(g.open)
	}
}

// list runs one List of s through the gate.
func (g *gate) list(ctx context.Context, s *portstest.Session, kind ports.ListKind, cursor string) (ports.Page, error) {
	g.mu.Lock()
	closed, open, ignore, after, only := g.closed, g.open, g.ignoreCtx, g.after, g.only
	g.mu.Unlock()
	if !closed || (only != nil && only != s) {
		return s.List(ctx, kind, cursor)
	}
	var page ports.Page
	var err error
	if after {
		page, err = s.List(ctx, kind, cursor)
	}
	g.entered <- struct{}{}
	if ignore {
		<-open
	} else {
		select {
		case <-open:
		case <-ctx.Done():
			return ports.Page{}, ctx.Err()
		}
	}
	if after {
		return page, err
	}
	if ignore {
		ctx = context.Background() // answers as if the end of ctx went unseen
	}
	return s.List(ctx, kind, cursor)
}

// gatedConnector wraps a portstest.Connector so every session's List
// passes the gate.
type gatedConnector struct {
	*portstest.Connector
	g *gate
}

func (c *gatedConnector) Connect(ctx context.Context, t ports.Target, s ports.Signals) (ports.Session, error) {
	sess, err := c.Connector.Connect(ctx, t, s)
	if err != nil {
		return nil, err
	}
	return &gatedSession{Session: sess.(*portstest.Session), g: c.g}, nil
}

type gatedSession struct {
	*portstest.Session
	g *gate
}

func (s *gatedSession) List(ctx context.Context, kind ports.ListKind, cursor string) (ports.Page, error) {
	return s.g.list(ctx, s.Session, kind, cursor)
}

// newGatedFixture is newFixture with a gate on every List.
func newGatedFixture(t *testing.T, sc portstest.SessionScript, opts *Options) (*fixture, *gate) {
	t.Helper()
	g := newGate()
	pc := portstest.NewConnector(sc)
	gc := &gatedConnector{Connector: pc, g: g}
	f := &fixture{conn: pc, clock: newClock(), rec: newRecorder()}
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Clock = f.clock
	o.OnChange = f.rec.OnChange
	if o.Jitter == nil {
		o.Jitter = func() float64 { return 0.5 }
	}
	f.srv = New(gc, ports.Target{ServerID: serverID, Kind: ports.TransportHTTP}, &o)
	t.Cleanup(func() {
		g.release()
		_ = f.srv.Close()
	})
	return f, g
}

// numTools returns the number of tools of st's catalog, -1 when none.
func numTools(st Status) int {
	if st.Catalog == nil {
		return -1
	}
	return len(st.Catalog.Tools)
}
