package supervisor

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

func TestCloseIsFinalAndIdempotent(t *testing.T) {
	f := newFixture(t, script("1", "a"), ports.TransportHTTP, nil)
	f.connect(t)
	require.NoError(t, closeWithin(t, f.srv))
	assert.True(t, f.session(t, 0).CloseCalled())
	st := f.srv.Status()
	assert.Equal(t, Closed, st.State)
	assert.Nil(t, st.Catalog)
	assert.Nil(t, f.srv.Catalog())

	require.NoError(t, closeWithin(t, f.srv))
	requireRefusal(t, f.srv.Connect(context.Background()), refusal.Internal, ReasonClosed)
	_, err := f.srv.Call(context.Background(), ports.CallRequest{Name: "a"})
	requireRefusal(t, err, refusal.Internal, ReasonClosed)
	requireRefusal(t, f.srv.Refresh(context.Background()), refusal.Internal, ReasonClosed)
	assert.Len(t, f.session(t, 0).CallRequests(), 0)
	assert.Equal(t, 1, f.conn.Calls("Connect"))
	assert.Equal(t, Closed, f.rec.snapshots()[len(f.rec.snapshots())-1].State)
}

func TestCloseOfIdleServer(t *testing.T) {
	s := New(portstest.NewConnector(script("1")), ports.Target{ServerID: serverID}, nil)
	require.NoError(t, s.Close())
	assert.Equal(t, Closed, s.Status().State)
}

func TestCloseReportsSessionCloseFailure(t *testing.T) {
	sc := script("1", "a")
	sc.OnSession = func(s *portstest.Session) {
		s.FailOnce("Close", errors.New("kill failed: /usr/bin/secret-helper"))
	}
	f := newFixture(t, sc, ports.TransportHTTP, nil)
	f.connect(t)
	err := f.srv.Close()
	e := requireRefusal(t, err, refusal.Internal, ReasonUnclassified)
	assert.NotContains(t, e.Error(), "secret-helper")
	require.NoError(t, closeWithin(t, f.srv))
}

func TestCloseDuringBackoffSleep(t *testing.T) {
	f := newFixture(t, script("1"), ports.TransportHTTP, nil)
	f.conn.Fail("Connect", refusal.New(refusal.Transient, "down", serverID))
	done := f.connectAsync(context.Background())
	f.clock.blockUntil(t, 1)
	require.NoError(t, closeWithin(t, f.srv))
	requireRefusal(t, recv(t, done), refusal.Internal, ReasonClosed)
	assert.Zero(t, f.clock.Sleepers())
	assert.Equal(t, Closed, f.srv.Status().State)
	assert.Equal(t, 1, f.conn.Calls("Connect"))
}

func TestCloseDuringConnect(t *testing.T) {
	entered := make(chan struct{}, 1)
	sc := script("1")
	sc.OnConnect = func(ctx context.Context, _ ports.Target) error {
		entered <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}
	f := newFixture(t, sc, ports.TransportHTTP, nil)
	done := f.connectAsync(context.Background())
	recv(t, entered)
	joined := f.connectAsync(context.Background())
	require.NoError(t, closeWithin(t, f.srv))
	requireRefusal(t, recv(t, done), refusal.Internal, ReasonClosed)
	requireRefusal(t, recv(t, joined), refusal.Internal, ReasonClosed)
	assert.Equal(t, Closed, f.srv.Status().State)
}

func TestCloseDuringFirstDiscovery(t *testing.T) {
	f, g := newGatedFixture(t, script("1", "a"), nil)
	g.hold()
	done := f.connectAsync(context.Background())
	recv(t, g.entered)
	require.NoError(t, closeWithin(t, f.srv))
	requireRefusal(t, recv(t, done), refusal.Internal, ReasonClosed)
	assert.True(t, f.session(t, 0).CloseCalled())
	assert.Nil(t, f.srv.Catalog())
}

// A connector that ignores ctx and returns a session after Close: the
// session must not be left open.
func TestSessionArrivingAfterCloseIsClosed(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	sc := script("1", "a")
	sc.OnConnect = func(context.Context, ports.Target) error {
		entered <- struct{}{}
		<-release
		return nil
	}
	f := newFixture(t, sc, ports.TransportHTTP, nil)
	done := f.connectAsync(context.Background())
	recv(t, entered)
	closed := make(chan error, 1)
	go func() { closed <- f.srv.Close() }()
	f.rec.awaitState(t, f.srv, Closed)
	select {
	case <-closed:
		t.Fatal("Close returned while an attempt was still running")
	default:
	}
	close(release)
	require.NoError(t, recv(t, closed))
	requireRefusal(t, recv(t, done), refusal.Internal, ReasonClosed)
	require.Len(t, f.conn.Sessions(), 1)
	assert.True(t, f.session(t, 0).CloseCalled())
}

// A session whose discovery ignores ctx and succeeds after Close: the
// attempt must not install it.
func TestDiscoveryFinishingAfterCloseIsNotInstalled(t *testing.T) {
	f, g := newGatedFixture(t, script("1", "a"), nil)
	g.configure(true, false, nil)
	g.hold()
	done := f.connectAsync(context.Background())
	recv(t, g.entered)
	closed := make(chan error, 1)
	go func() { closed <- f.srv.Close() }()
	f.rec.awaitState(t, f.srv, Closed)
	g.release()
	require.NoError(t, recv(t, closed))
	requireRefusal(t, recv(t, done), refusal.Internal, ReasonClosed)
	assert.True(t, f.session(t, 0).CloseCalled())
	st := f.srv.Status()
	assert.Equal(t, Closed, st.State)
	assert.Nil(t, st.Catalog)
}

func TestCloseEndsInFlightCall(t *testing.T) {
	started := make(chan struct{}, 1)
	f := newFixture(t, blockingCall(started), ports.TransportHTTP, nil)
	f.connect(t)
	done := make(chan error, 1)
	go func() {
		_, err := f.srv.Call(context.Background(), ports.CallRequest{Name: "slow"})
		done <- err
	}()
	recv(t, started)
	require.NoError(t, closeWithin(t, f.srv))
	// Close returned only after the call had left the session: nothing is
	// in flight the moment it returns. (The caller's goroutine may hand
	// its error on a moment later: reading done at once raced with it.)
	assert.Zero(t, f.session(t, 0).InFlight(), "Close returned before the in-flight call")
	require.Error(t, recv(t, done))
}

func TestCloseDuringBackgroundRefresh(t *testing.T) {
	f, g := newGatedFixture(t, script("1", "a"), nil)
	f.connect(t)
	g.hold()
	f.session(t, 0).FireListChanged(ports.ListTools)
	recv(t, g.entered)
	require.NoError(t, closeWithin(t, f.srv))
	assert.Equal(t, Closed, f.srv.Status().State)
}

func TestOnChangeMayReadAndOrderIsKept(t *testing.T) {
	var (
		mu     sync.Mutex
		states []State
		srv    atomic.Pointer[Server]
	)
	c := portstest.NewConnector(script("1", "a"))
	c.FailOnce("Connect", refusal.New(refusal.Transient, "blip", serverID))
	clock := newClock()
	s := New(c, ports.Target{ServerID: serverID}, &Options{
		Clock: clock,
		OnChange: func(st Status) {
			if p := srv.Load(); p != nil {
				_ = p.Status() // must not deadlock
				_ = p.Catalog()
			}
			mu.Lock()
			states = append(states, st.State)
			mu.Unlock()
		},
	})
	srv.Store(s)
	defer s.Close()
	ch := make(chan error, 1)
	go func() { ch <- s.Connect(context.Background()) }()
	clock.blockUntil(t, 1)
	clock.Advance(time.Hour)
	require.NoError(t, recv(t, ch))
	require.NoError(t, s.Close())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []State{Connecting, Backoff, Connecting, Ready, Closed}, states)
}

func TestConcurrentUse(t *testing.T) {
	sc := script("1", "a", "b")
	sc.Call = func(ctx context.Context, r ports.CallRequest) (ports.CallResult, error) {
		return ports.CallResult{Content: r.Arguments}, nil
	}
	f := newFixture(t, sc, ports.TransportHTTP, &Options{MaxAttempts: 1000, StableAfter: time.Nanosecond})
	f.connect(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				switch i % 4 {
				case 0:
					_, _ = f.srv.Call(ctx, ports.CallRequest{Name: "a"})
				case 1:
					_ = f.srv.Refresh(ctx)
				case 2:
					_ = f.srv.Status()
					_ = f.srv.Catalog()
				case 3:
					cctx, ccancel := context.WithTimeout(ctx, time.Millisecond)
					_ = f.srv.Connect(cctx)
					ccancel()
				}
			}
		}()
	}
	// Disconnect sessions and fire signals while the clock moves.
	for i := range 100 {
		ss := f.conn.Sessions()
		last := ss[len(ss)-1]
		last.FireListChanged(ports.ListTools)
		if i%2 == 0 {
			last.Disconnect()
		}
		f.clock.Advance(time.Hour)
		time.Sleep(50 * time.Microsecond)
	}
	cancel()
	wg.Wait()
	require.NoError(t, closeWithin(t, f.srv))
	assert.Equal(t, Closed, f.srv.Status().State)
	for _, s := range f.conn.Sessions() {
		assert.True(t, s.Closed(), "a session was left open")
	}
}

// TestCloseDropsTheFailure: a failed server's failure is not reported
// again at Close: the Closed status (the last OnChange snapshot and
// Status) holds no failure.
func TestCloseDropsTheFailure(t *testing.T) {
	f := newFixture(t, script("1"), ports.TransportHTTP, nil)
	f.conn.Fail("Connect", refusal.New(refusal.Refused, "egress_refused", serverID))
	requireRefusal(t, f.srv.Connect(context.Background()), refusal.Refused, "egress_refused")
	require.Equal(t, Failed, f.srv.Status().State)
	require.NoError(t, closeWithin(t, f.srv))
	snaps := f.rec.snapshots()
	last := snaps[len(snaps)-1]
	assert.Equal(t, Closed, last.State)
	assert.Nil(t, last.Err, "Close is not a failure: %s", describe(last))
	assert.Nil(t, f.srv.Status().Err)
	failures := 0
	for _, st := range snaps {
		if st.Err != nil && st.Err.Reason == "egress_refused" {
			failures++
		}
	}
	assert.Equal(t, 1, failures, "the failure is reported once")
}

// TestCloseWith: every use after CloseWith fails with the owner's refusal,
// carrying the server id, whatever server id the refusal named; the tools
// of a catalog it held too. A later Close changes nothing.
func TestCloseWith(t *testing.T) {
	f := newFixture(t, script("1", "a"), ports.TransportHTTP, nil)
	f.connect(t)
	tool, ok := f.srv.Catalog().Tool(catalog.ToolName(serverID, "a"))
	require.True(t, ok)
	why := &refusal.Error{Class: refusal.Config, Reason: "fleet_closed", Server: "other", Detail: "the owner closed it"}
	require.NoError(t, f.srv.CloseWith(why))
	require.NoError(t, f.srv.Close())
	assert.Equal(t, "other", why.Server, "the owner's refusal is not modified")

	e := requireRefusal(t, f.srv.Connect(context.Background()), refusal.Config, "fleet_closed")
	assert.Equal(t, "the owner closed it", e.Detail)
	_, err := f.srv.Call(context.Background(), ports.CallRequest{Name: "a"})
	requireRefusal(t, err, refusal.Config, "fleet_closed")
	requireRefusal(t, f.srv.Refresh(context.Background()), refusal.Config, "fleet_closed")
	_, err = f.srv.GetPrompt(context.Background(), ports.GetPromptRequest{Name: "p"})
	requireRefusal(t, err, refusal.Config, "fleet_closed")
	_, err = tool.Call(context.Background(), nil)
	requireRefusal(t, err, refusal.Config, "fleet_closed")
	assert.Len(t, f.session(t, 0).CallRequests(), 0)
}
