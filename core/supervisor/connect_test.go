package supervisor

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

func TestStateString(t *testing.T) {
	tests := []struct {
		s    State
		want string
	}{
		{Idle, "idle"},
		{Connecting, "connecting"},
		{Ready, "ready"},
		{Backoff, "backoff"},
		{Failed, "failed"},
		{Closed, "closed"},
		{State(-1), "unknown"},
		{State(6), "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.s.String())
			b, err := tt.s.MarshalText()
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(b))
		})
	}
	var zero State
	assert.Equal(t, Idle, zero)
}

func TestBackoff(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name      string
		n         int
		base, max time.Duration
		jitter    float64
		want      time.Duration
	}{
		{"first, no jitter", 1, 100 * ms, time.Second, 0, 50 * ms},
		{"first, half jitter", 1, 100 * ms, time.Second, 0.5, 75 * ms},
		{"first, full jitter", 1, 100 * ms, time.Second, 1, 100 * ms},
		{"second doubles", 2, 100 * ms, time.Second, 0.5, 150 * ms},
		{"third", 3, 100 * ms, time.Second, 0.5, 300 * ms},
		{"fourth", 4, 100 * ms, time.Second, 0.5, 600 * ms},
		{"fifth capped", 5, 100 * ms, time.Second, 0.5, 750 * ms},
		{"huge n capped, no overflow", 1 << 30, 100 * ms, time.Second, 0.5, 750 * ms},
		{"max duration base", 3, time.Duration(math.MaxInt64), time.Duration(math.MaxInt64), 0, time.Duration(math.MaxInt64) / 2},
		{"doubling would overflow", 3, time.Duration(math.MaxInt64/2 + 1), time.Duration(math.MaxInt64), 0, time.Duration(math.MaxInt64) / 2},
		{"n zero is first", 0, 100 * ms, time.Second, 0, 50 * ms},
		{"negative jitter clamped", 1, 100 * ms, time.Second, -3, 50 * ms},
		{"jitter above one clamped", 1, 100 * ms, time.Second, 7, 100 * ms},
		{"NaN jitter is zero", 1, 100 * ms, time.Second, math.NaN(), 50 * ms},
		{"odd cap", 2, 3 * ms, 5 * ms, 0, 2500 * time.Microsecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := backoff(tt.n, tt.base, tt.max, tt.jitter)
			assert.Equal(t, tt.want, got)
			assert.LessOrEqual(t, got, tt.max)
			assert.Positive(t, got)
		})
	}
}

func TestNewDefaults(t *testing.T) {
	s := New(portstest.NewConnector(script("1")), ports.Target{ServerID: serverID}, nil)
	defer s.Close()
	assert.Equal(t, DefaultMaxAttempts, s.maxAttempts)
	assert.Equal(t, DefaultBaseDelay, s.baseDelay)
	assert.Equal(t, DefaultMaxDelay, s.maxDelay)
	assert.Equal(t, DefaultConnectTimeout, s.connectTimeout)
	assert.Equal(t, DefaultCallTimeout, s.callTimeout)
	assert.Equal(t, DefaultCallTimeoutMax, s.callTimeoutMax)
	assert.Equal(t, DefaultStableAfter, s.stableAfter)
	assert.IsType(t, realClock{}, s.clock)
	j := s.jitter()
	assert.True(t, j >= 0 && j < 1)
	assert.Equal(t, Status{Server: serverID, State: Idle}, s.Status())
	assert.Nil(t, s.Catalog())

	neg := New(portstest.NewConnector(script("1")), ports.Target{ServerID: serverID}, &Options{
		MaxAttempts: -1, BaseDelay: -1, MaxDelay: -1, StableAfter: -1,
		ConnectTimeout: NoTimeout, CallTimeout: NoTimeout, CallTimeoutMax: -time.Second,
	})
	defer neg.Close()
	assert.Equal(t, DefaultMaxAttempts, neg.maxAttempts)
	assert.Equal(t, DefaultBaseDelay, neg.baseDelay)
	assert.Zero(t, neg.connectTimeout, "a negative timeout is none")
	assert.Zero(t, neg.callTimeout)
	assert.Zero(t, neg.callTimeoutMax)

	capped := New(portstest.NewConnector(script("1")), ports.Target{ServerID: serverID}, &Options{
		BaseDelay: time.Minute, MaxDelay: time.Second,
	})
	defer capped.Close()
	assert.Equal(t, time.Second, capped.baseDelay)
}

func TestConnectReady(t *testing.T) {
	f := newFixture(t, script("1", "a", "b"), ports.TransportHTTP, nil)
	f.connect(t)

	st := f.srv.Status()
	assert.Equal(t, serverID, st.Server)
	assert.Nil(t, st.Err)
	assert.Zero(t, st.Attempts)
	assert.Zero(t, st.Disconnects)
	require.NotNil(t, st.Catalog)
	assert.Same(t, st.Catalog, f.srv.Catalog())
	assert.Equal(t, 2, numTools(st))
	assert.False(t, st.Catalog.Stale)
	assert.True(t, st.Catalog.Complete())
	assert.Equal(t, serverID, st.Catalog.Identity.ServerID)
	assert.Equal(t, "1", st.Catalog.Identity.ServerVersion)

	require.Len(t, f.conn.Targets(), 1)
	assert.Equal(t, serverID, f.conn.Targets()[0].ServerID)
	assert.Equal(t, []State{Connecting, Ready}, f.rec.states())

	// Ready: Connect returns at once without connecting again.
	require.NoError(t, f.srv.Connect(context.Background()))
	assert.Equal(t, 1, f.conn.Calls("Connect"))
	assert.Empty(t, f.clock.Sleeps())
}

func TestConnectRetriesTransientWithExactDelays(t *testing.T) {
	const ms = time.Millisecond
	f := newFixture(t, script("1", "a"), ports.TransportHTTP, &Options{
		MaxAttempts: 6, BaseDelay: 100 * ms, MaxDelay: time.Second,
	})
	for i := range 5 {
		f.conn.FailOnce("Connect", refusal.New(refusal.Transient, fmt.Sprintf("hiccup_%d", i), serverID))
	}
	done := f.connectAsync(context.Background())

	want := []time.Duration{75 * ms, 150 * ms, 300 * ms, 600 * ms, 750 * ms}
	for i, d := range want {
		f.clock.blockUntil(t, 1)
		st := f.srv.Status()
		assert.Equal(t, Backoff, st.State)
		assert.Equal(t, i+1, st.Attempts)
		requireRefusal(t, st.Err, refusal.Transient, fmt.Sprintf("hiccup_%d", i))
		// The sleep is exactly d: one nanosecond short keeps it asleep.
		f.clock.Advance(d - 1)
		require.Equal(t, 1, f.clock.Sleepers(), "sleep %d ended before %v", i, d)
		assert.Equal(t, i+1, f.conn.Calls("Connect"))
		f.clock.Advance(1)
	}
	require.NoError(t, recv(t, done))
	assert.Equal(t, want, f.clock.Sleeps())
	assert.Equal(t, 6, f.conn.Calls("Connect"))
	st := f.srv.Status()
	assert.Equal(t, Ready, st.State)
	assert.Zero(t, st.Attempts)
	assert.Nil(t, st.Err)
}

func TestConnectExhaustsAttempts(t *testing.T) {
	f := newFixture(t, script("1"), ports.TransportHTTP, &Options{
		MaxAttempts: 3, BaseDelay: 10 * time.Millisecond, MaxDelay: time.Second,
	})
	for i := range 3 {
		f.conn.FailOnce("Connect", refusal.New(refusal.Transient, fmt.Sprintf("down_%d", i), ""))
	}
	done := f.connectAsync(context.Background())
	for range 2 {
		f.clock.blockUntil(t, 1)
		f.clock.Advance(time.Hour)
	}
	err := recv(t, done)
	// The last failure, with the server id filled in.
	requireRefusal(t, err, refusal.Transient, "down_2")
	st := f.srv.Status()
	assert.Equal(t, Failed, st.State)
	assert.Equal(t, 3, st.Attempts)
	assert.Same(t, err, st.Err)
	assert.Equal(t, 3, f.conn.Calls("Connect"))
	assert.Len(t, f.clock.Sleeps(), 2)
	// Failed is final until a caller acts: nothing sleeps or connects.
	assert.Zero(t, f.clock.Sleepers())
	f.clock.Advance(24 * time.Hour)
	assert.Equal(t, 3, f.conn.Calls("Connect"))
	assert.Equal(t, Failed, f.srv.Status().State)

	// A caller's Connect starts a fresh sequence.
	f.connect(t)
	assert.Equal(t, 4, f.conn.Calls("Connect"))
	assert.Zero(t, f.srv.Status().Attempts)
}

func TestNonTransientNeverRetried(t *testing.T) {
	classes := []refusal.Class{
		refusal.Internal, refusal.AuthRequired, refusal.AuthRefused, refusal.Refused,
		refusal.Unsupported, refusal.Protocol, refusal.Config,
	}
	type tc struct {
		name   string
		err    error
		class  refusal.Class
		reason string
	}
	var tests []tc
	for _, c := range classes {
		tests = append(tests, tc{c.String(), refusal.New(c, "why_"+c.String(), serverID), c, "why_" + c.String()})
	}
	tests = append(tests,
		tc{"wrapped refusal", fmt.Errorf("ctx: %w", refusal.New(refusal.AuthRequired, "sign_in", serverID)), refusal.AuthRequired, "sign_in"},
		tc{"plain error is internal", errors.New("dial tcp 10.0.0.1:443: secret-token"), refusal.Internal, ReasonUnclassified},
	)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, script("1"), ports.TransportHTTP, nil)
			f.conn.FailOnce("Connect", tt.err)
			err := recv(t, f.connectAsync(context.Background()))
			e := requireRefusal(t, err, tt.class, tt.reason)
			assert.NotContains(t, e.Error(), "secret-token")
			assert.NotContains(t, e.Error(), "10.0.0.1")
			st := f.srv.Status()
			assert.Equal(t, Failed, st.State)
			assert.Equal(t, 1, st.Attempts)
			assert.Equal(t, 1, f.conn.Calls("Connect"))
			assert.Empty(t, f.clock.Sleeps())
			assert.Zero(t, f.clock.Sleepers())
		})
	}
}

func TestNonTransientAfterTransientStops(t *testing.T) {
	f := newFixture(t, script("1"), ports.TransportHTTP, &Options{MaxAttempts: 5})
	f.conn.FailOnce("Connect", refusal.New(refusal.Transient, "blip", serverID))
	f.conn.FailOnce("Connect", refusal.New(refusal.AuthRequired, "sign_in", serverID))
	done := f.connectAsync(context.Background())
	f.clock.blockUntil(t, 1)
	f.clock.Advance(time.Hour)
	requireRefusal(t, recv(t, done), refusal.AuthRequired, "sign_in")
	assert.Equal(t, 2, f.conn.Calls("Connect"))
	assert.Equal(t, 2, f.srv.Status().Attempts)
}

func TestConnectorReturnsNoSession(t *testing.T) {
	rec := newRecorder()
	s := New(nilConnector{}, ports.Target{ServerID: serverID}, &Options{Clock: newClock(), OnChange: rec.OnChange})
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	requireRefusal(t, s.Connect(ctx), refusal.Internal, ReasonNoSession)
	assert.Equal(t, Failed, s.Status().State)
}

type nilConnector struct{}

func (nilConnector) Connect(context.Context, ports.Target, ports.Signals) (ports.Session, error) {
	return nil, nil
}

func TestConnectCancelled(t *testing.T) {
	t.Run("during backoff", func(t *testing.T) {
		f := newFixture(t, script("1"), ports.TransportHTTP, nil)
		f.conn.Fail("Connect", refusal.New(refusal.Transient, "down", serverID))
		ctx, cancel := context.WithCancel(context.Background())
		done := f.connectAsync(ctx)
		f.clock.blockUntil(t, 1)
		cancel()
		requireRefusal(t, recv(t, done), refusal.Transient, ReasonCancelled)
		st := f.srv.Status()
		assert.Equal(t, Idle, st.State)
		requireRefusal(t, st.Err, refusal.Transient, ReasonCancelled)
		assert.Zero(t, f.clock.Sleepers())
		assert.Equal(t, 1, f.conn.Calls("Connect"))

		// Nothing goes on in the background; a later Connect works.
		f.conn.Fail("Connect", nil)
		f.connect(t)
	})
	t.Run("deadline during connect", func(t *testing.T) {
		entered := make(chan struct{}, 1)
		sc := script("1")
		sc.OnConnect = func(ctx context.Context, _ ports.Target) error {
			entered <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		}
		f := newFixture(t, sc, ports.TransportHTTP, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		err := f.srv.Connect(ctx)
		requireRefusal(t, err, refusal.Transient, ReasonTimeout)
		assert.Equal(t, Idle, f.srv.Status().State)
		assert.Len(t, entered, 1)
		assert.Empty(t, f.conn.Sessions())
	})
	t.Run("already ended", func(t *testing.T) {
		f := newFixture(t, script("1"), ports.TransportHTTP, nil)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		requireRefusal(t, f.srv.Connect(ctx), refusal.Transient, ReasonCancelled)
		assert.Zero(t, f.conn.Calls("Connect"))
		assert.Equal(t, Idle, f.srv.Status().State)
	})
}

func TestConnectTimeout(t *testing.T) {
	t.Run("unclassified becomes connect_timeout and is retried", func(t *testing.T) {
		sc := script("1")
		var mu sync.Mutex
		n := 0
		sc.OnConnect = func(ctx context.Context, _ ports.Target) error {
			mu.Lock()
			n++
			first := n == 1
			mu.Unlock()
			if first {
				<-ctx.Done() // a hung server
				return ctx.Err()
			}
			return nil
		}
		f := newFixture(t, sc, ports.TransportHTTP, &Options{ConnectTimeout: 20 * time.Millisecond, MaxAttempts: 2})
		done := f.connectAsync(context.Background())
		f.clock.blockUntil(t, 1)
		requireRefusal(t, f.srv.Status().Err, refusal.Transient, ReasonConnectTimeout)
		f.clock.Advance(time.Hour)
		require.NoError(t, recv(t, done))
	})
	t.Run("a silent stdio server is one attempt", func(t *testing.T) {
		// A process that started but never answers initialize: starting it
		// again would be as silent (#25 item 7).
		sc := script("1")
		sc.OnConnect = func(ctx context.Context, _ ports.Target) error {
			<-ctx.Done()
			return ctx.Err()
		}
		f := newFixture(t, sc, ports.TransportStdio, &Options{ConnectTimeout: 20 * time.Millisecond, MaxAttempts: 3})
		re := requireRefusal(t, recv(t, f.connectAsync(context.Background())), refusal.Protocol, ReasonConnectTimeout)
		assert.Contains(t, re.Detail, "never answered initialize")
		assert.Equal(t, 1, f.conn.Calls("Connect"))
		assert.Equal(t, Failed, f.srv.Status().State)
	})
	t.Run("connector's refusal is kept", func(t *testing.T) {
		sc := script("1")
		sc.OnConnect = func(ctx context.Context, _ ports.Target) error {
			<-ctx.Done()
			return refusal.New(refusal.Protocol, "handshake_stalled", serverID)
		}
		f := newFixture(t, sc, ports.TransportHTTP, &Options{ConnectTimeout: 20 * time.Millisecond})
		requireRefusal(t, recv(t, f.connectAsync(context.Background())), refusal.Protocol, "handshake_stalled")
		assert.Equal(t, 1, f.conn.Calls("Connect"))
	})
	t.Run("discovery that outlives it fails the attempt", func(t *testing.T) {
		f, g := newGatedFixture(t, script("1", "a"), &Options{ConnectTimeout: 20 * time.Millisecond, MaxAttempts: 1})
		g.hold()
		err := recv(t, f.connectAsync(context.Background()))
		requireRefusal(t, err, refusal.Transient, ReasonConnectTimeout)
		assert.Equal(t, Failed, f.srv.Status().State)
		require.Len(t, f.conn.Sessions(), 1)
		assert.True(t, f.session(t, 0).CloseCalled(), "the timed-out session was not closed")
		assert.Nil(t, f.srv.Catalog())
	})
}

func TestConcurrentConnectsShareOneSequence(t *testing.T) {
	release := make(chan struct{})
	sc := script("1", "a")
	sc.OnConnect = func(ctx context.Context, _ ports.Target) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f := newFixture(t, sc, ports.TransportHTTP, nil)
	var dones []<-chan error
	for range 8 {
		dones = append(dones, f.connectAsync(context.Background()))
	}
	f.rec.awaitState(t, f.srv, Connecting)
	close(release)
	for _, d := range dones {
		require.NoError(t, recv(t, d))
	}
	assert.Equal(t, 1, f.conn.Calls("Connect"))
}

func TestJoinedConnectReportsFailure(t *testing.T) {
	release := make(chan struct{})
	sc := script("1")
	sc.OnConnect = func(ctx context.Context, _ ports.Target) error {
		<-release
		return refusal.New(refusal.Refused, "egress_refused", serverID)
	}
	f := newFixture(t, sc, ports.TransportHTTP, nil)
	a := f.connectAsync(context.Background())
	f.rec.awaitState(t, f.srv, Connecting)
	b := f.connectAsync(context.Background())
	close(release)
	requireRefusal(t, recv(t, a), refusal.Refused, "egress_refused")
	requireRefusal(t, recv(t, b), refusal.Refused, "egress_refused")
	// b may have joined, or started after Failed: at most two attempts.
	assert.LessOrEqual(t, f.conn.Calls("Connect"), 2)
}

func TestJoinerOutlivesOwnersCancel(t *testing.T) {
	sc := script("1", "a")
	var mu sync.Mutex
	calls := 0
	sc.OnConnect = func(ctx context.Context, _ ports.Target) error {
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		if first {
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	f := newFixture(t, sc, ports.TransportHTTP, nil)
	ownerCtx, cancelOwner := context.WithCancel(context.Background())
	owner := f.connectAsync(ownerCtx)
	f.rec.awaitState(t, f.srv, Connecting)
	joiner := f.connectAsync(context.Background())
	// Let the joiner reach its wait (it cannot be observed directly; either
	// order is correct, the joiner must succeed in both).
	time.Sleep(5 * time.Millisecond)
	cancelOwner()
	requireRefusal(t, recv(t, owner), refusal.Transient, ReasonCancelled)
	require.NoError(t, recv(t, joiner))
	assert.Equal(t, Ready, f.srv.Status().State)
}

func TestJoinerCtxEndsWithoutStoppingSequence(t *testing.T) {
	release := make(chan struct{})
	sc := script("1", "a")
	sc.OnConnect = func(ctx context.Context, _ ports.Target) error {
		<-release
		return nil
	}
	f := newFixture(t, sc, ports.TransportHTTP, nil)
	owner := f.connectAsync(context.Background())
	f.rec.awaitState(t, f.srv, Connecting)
	ctx, cancel := context.WithCancel(context.Background())
	joiner := f.connectAsync(ctx)
	cancel()
	requireRefusal(t, recv(t, joiner), refusal.Transient, ReasonCancelled)
	close(release)
	require.NoError(t, recv(t, owner))
}

func TestRealClockBackoff(t *testing.T) {
	c := portstest.NewConnector(script("1", "a"))
	c.FailOnce("Connect", refusal.New(refusal.Transient, "blip", serverID))
	c.FailOnce("Connect", refusal.New(refusal.Transient, "blip", serverID))
	s := New(c, ports.Target{ServerID: serverID}, &Options{BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond})
	defer s.Close()
	start := time.Now()
	require.NoError(t, s.Connect(context.Background()))
	assert.Equal(t, 3, c.Calls("Connect"))
	// Equal jitter: at least 0.5ms + 1ms of sleeping.
	assert.GreaterOrEqual(t, time.Since(start), 1500*time.Microsecond)
}

func TestClockFailureIsInternal(t *testing.T) {
	f := newFixture(t, script("1"), ports.TransportHTTP, nil)
	f.conn.FailOnce("Connect", refusal.New(refusal.Transient, "blip", serverID))
	f.clock.FailOnce("Sleep", errors.New("clock broke"))
	requireRefusal(t, recv(t, f.connectAsync(context.Background())), refusal.Internal, ReasonClockFailed)
	assert.Equal(t, Failed, f.srv.Status().State)
}
