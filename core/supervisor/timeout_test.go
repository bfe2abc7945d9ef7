package supervisor

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

func TestConnectTimeoutOption(t *testing.T) {
	tests := []struct {
		name         string
		timeout      time.Duration
		wantDeadline bool
	}{
		{"default", 0, true},
		{"set", time.Hour, true},
		{"none", NoTimeout, false},
		{"any negative is none", -time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := script("1", "a")
			var has atomic.Bool
			sc.OnConnect = func(ctx context.Context, _ ports.Target) error {
				_, ok := ctx.Deadline()
				has.Store(ok)
				return nil
			}
			f := newFixture(t, sc, ports.TransportHTTP, &Options{ConnectTimeout: tt.timeout})
			require.NoError(t, recv(t, f.connectAsync(context.Background())))
			assert.Equal(t, tt.wantDeadline, has.Load())
		})
	}
}

// The connector's view of its ended ctx (mcpsession says Transient
// "deadline_exceeded") is the attempt's timeout, not the caller's.
func TestConnectTimeoutRenamesTransient(t *testing.T) {
	sc := script("1")
	sc.OnConnect = func(ctx context.Context, _ ports.Target) error {
		<-ctx.Done()
		return refusal.New(refusal.Transient, "deadline_exceeded", serverID)
	}
	f := newFixture(t, sc, ports.TransportHTTP, &Options{ConnectTimeout: 20 * time.Millisecond, MaxAttempts: 2})
	done := f.connectAsync(context.Background())
	f.clock.blockUntil(t, 1)
	requireRefusal(t, f.srv.Status().Err, refusal.Transient, ReasonConnectTimeout)
	assert.Equal(t, Backoff, f.srv.Status().State, "retried under the backoff")
	f.clock.Advance(time.Hour)
	requireRefusal(t, recv(t, done), refusal.Transient, ReasonConnectTimeout)
	assert.Equal(t, 2, f.conn.Calls("Connect"))
}

// progressScript is a script whose tool "slow" reports progress every interval
// until ctx ends, or stops reporting after quiet (0: never), and returns
// "done" after total (0: never).
func progressScript(interval, quietAfter, total time.Duration) func(ctx context.Context, r ports.CallRequest) (ports.CallResult, error) {
	return func(ctx context.Context, r ports.CallRequest) (ports.CallResult, error) {
		start := time.Now()
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-ctx.Done():
				return ports.CallResult{}, ctx.Err()
			case <-tick.C:
			}
			if total > 0 && time.Since(start) >= total {
				return ports.CallResult{Content: []byte(`[{"type":"text","text":"done"}]`)}, nil
			}
			if (quietAfter == 0 || time.Since(start) < quietAfter) && r.OnProgress != nil {
				r.OnProgress(ports.Progress{Progress: float64(n)})
			}
		}
	}
}

func TestCallTimeout(t *testing.T) {
	tests := []struct {
		name     string
		opts     Options
		call     func(ctx context.Context, r ports.CallRequest) (ports.CallResult, error)
		wantErr  bool
		atLeast  time.Duration // the call lasted at least this long
		atMost   time.Duration // ...and ended well before this (0: unchecked)
		progress bool          // the caller saw progress
		noAsk    bool          // the caller asks for no progress
	}{
		{
			name:    "silent call times out",
			opts:    Options{CallTimeout: 50 * time.Millisecond},
			call:    blockingCall(make(chan struct{}, 100)).Call,
			wantErr: true, atLeast: 50 * time.Millisecond,
		},
		{
			name:     "progress keeps a call alive past CallTimeout",
			opts:     Options{CallTimeout: 400 * time.Millisecond},
			call:     progressScript(20*time.Millisecond, 0, 1200*time.Millisecond),
			atLeast:  1200 * time.Millisecond,
			progress: true,
		},
		{
			name:    "progress not asked for: CallTimeout bounds the whole call",
			opts:    Options{CallTimeout: 400 * time.Millisecond},
			call:    progressScript(20*time.Millisecond, 0, 1200*time.Millisecond),
			noAsk:   true,
			wantErr: true, atLeast: 400 * time.Millisecond,
		},
		{
			name:     "a call that goes silent times out",
			opts:     Options{CallTimeout: 200 * time.Millisecond},
			call:     progressScript(20*time.Millisecond, 300*time.Millisecond, 0),
			wantErr:  true,
			atLeast:  400 * time.Millisecond, // past CallTimeout: progress extended it
			progress: true,
		},
		{
			name:     "CallTimeoutMax caps a call that keeps reporting",
			opts:     Options{CallTimeout: time.Minute, CallTimeoutMax: 300 * time.Millisecond},
			call:     progressScript(20*time.Millisecond, 0, 0),
			wantErr:  true,
			atLeast:  300 * time.Millisecond,
			atMost:   time.Minute,
			progress: true,
		},
		{
			name:    "CallTimeoutMax without CallTimeout",
			opts:    Options{CallTimeout: NoTimeout, CallTimeoutMax: 100 * time.Millisecond},
			call:    progressScript(20*time.Millisecond, 0, 0),
			wantErr: true, atLeast: 100 * time.Millisecond, atMost: time.Minute,
			progress: true,
		},
		{
			name:    "CallTimeoutMax below CallTimeout",
			opts:    Options{CallTimeout: time.Minute, CallTimeoutMax: 100 * time.Millisecond},
			call:    blockingCall(make(chan struct{}, 100)).Call,
			wantErr: true, atLeast: 100 * time.Millisecond, atMost: time.Minute,
		},
	}
	for _, tt := range tests {
		for _, kind := range []ports.TransportKind{ports.TransportHTTP, ports.TransportStdio} {
			t.Run(tt.name+"/"+string(kind), func(t *testing.T) {
				sc := script("1", "slow")
				sc.Call = tt.call
				f := newFixture(t, sc, kind, &tt.opts)
				f.connect(t)
				var seen atomic.Int32
				start := time.Now()
				req := ports.CallRequest{Name: "slow", OnProgress: func(ports.Progress) { seen.Add(1) }}
				if tt.noAsk {
					req.OnProgress = nil
				}
				res, err := f.srv.Call(context.Background(), req)
				took := time.Since(start)
				assert.GreaterOrEqual(t, took, tt.atLeast)
				if tt.atMost > 0 {
					assert.Less(t, took, tt.atMost)
				}
				assert.Equal(t, tt.progress, seen.Load() > 0, "progress reached the caller")
				require.Len(t, f.session(t, 0).CallRequests(), 1)
				assert.Equal(t, !tt.noAsk, f.session(t, 0).CallRequests()[0].OnProgress != nil, "the call asked for progress")
				if !tt.wantErr {
					require.NoError(t, err)
					assert.JSONEq(t, `[{"type":"text","text":"done"}]`, string(res.Content))
					assert.Equal(t, Ready, f.srv.Status().State)
					return
				}
				requireRefusal(t, err, refusal.Transient, ReasonCallTimeout)
				assert.Zero(t, f.session(t, 0).InFlight())
				if kind == ports.TransportHTTP {
					assert.False(t, f.session(t, 0).CloseCalled(), "over HTTP the session stays")
					assert.Equal(t, Ready, f.srv.Status().State)
					return
				}
				assert.True(t, f.session(t, 0).CloseCalled(), "over stdio the abandoned call closes the session and its child")
				st := f.rec.await(t, f.srv, "recycled", func(st Status) bool {
					return st.State == Ready && len(f.conn.Sessions()) == 2
				})
				assert.Zero(t, st.Disconnects, "a timed-out call is not a disconnect")
				assert.Empty(t, f.clock.Sleeps())
				assert.Empty(t, f.session(t, 1).CallRequests(), "a timed-out call is never replayed")
			})
		}
	}
}

// The end of the caller's own ctx is reported as such, never as
// call_timeout, whatever the call timeouts are.
func TestCallerCtxIsNotACallTimeout(t *testing.T) {
	tests := []struct {
		name   string
		ctx    func() (context.Context, context.CancelFunc)
		cancel bool
		reason string
	}{
		{"cancel", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, true, ReasonCancelled},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 30*time.Millisecond)
		}, false, ReasonTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			started := make(chan struct{}, 1)
			f := newFixture(t, blockingCall(started), ports.TransportHTTP, &Options{CallTimeout: time.Minute, CallTimeoutMax: time.Hour})
			f.connect(t)
			ctx, cancel := tt.ctx()
			defer cancel()
			if tt.cancel {
				go func() { <-started; cancel() }()
			}
			_, err := f.srv.Call(ctx, ports.CallRequest{Name: "slow"})
			requireRefusal(t, err, refusal.Transient, tt.reason)
		})
	}
}

// A call asks the server for progress only when its caller asked for it,
// whatever the timeouts.
func TestCallAsksForProgressOnlyWhenAsked(t *testing.T) {
	none := Options{CallTimeout: NoTimeout, CallTimeoutMax: NoTimeout}
	tests := []struct {
		name  string
		opts  Options
		req   func() ports.CallRequest
		ctx   func() context.Context
		wants bool
	}{
		{"default timeouts, no callback", Options{}, func() ports.CallRequest { return ports.CallRequest{Name: "a"} }, context.Background, false},
		{"only CallTimeout, no callback", Options{CallTimeoutMax: NoTimeout}, func() ports.CallRequest { return ports.CallRequest{Name: "a"} }, context.Background, false},
		{"default timeouts, a callback", Options{}, func() ports.CallRequest {
			return ports.CallRequest{Name: "a", OnProgress: func(ports.Progress) {}}
		}, context.Background, true},
		{"default timeouts, a callback in ctx", Options{}, func() ports.CallRequest { return ports.CallRequest{Name: "a"} }, func() context.Context {
			return ports.WithProgress(context.Background(), func(ports.Progress) {})
		}, true},
		{"no timeout, no callback", none, func() ports.CallRequest { return ports.CallRequest{Name: "a"} }, context.Background, false},
		{"no timeout, a callback", none, func() ports.CallRequest {
			return ports.CallRequest{Name: "a", OnProgress: func(ports.Progress) {}}
		}, context.Background, true},
		{"no timeout, a callback in ctx", none, func() ports.CallRequest { return ports.CallRequest{Name: "a"} }, func() context.Context {
			return ports.WithProgress(context.Background(), func(ports.Progress) {})
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, script("1", "a"), ports.TransportHTTP, &tt.opts)
			f.connect(t)
			_, err := f.srv.Call(tt.ctx(), tt.req())
			require.NoError(t, err)
			got := f.session(t, 0).CallRequests()
			require.Len(t, got, 1)
			assert.Equal(t, tt.wants, got[0].OnProgress != nil)
		})
	}
}

// progressRecorder is a caller's progress callback.
type progressRecorder struct {
	mu    sync.Mutex
	got   []ports.Progress
	first chan struct{} // closed at the first call
	block chan struct{} // the first call waits for it
	once  sync.Once
}

func newProgressRecorder() *progressRecorder {
	return &progressRecorder{first: make(chan struct{}), block: make(chan struct{})}
}

func (p *progressRecorder) on(pr ports.Progress) {
	p.mu.Lock()
	p.got = append(p.got, pr)
	p.mu.Unlock()
	p.once.Do(func() {
		close(p.first)
		<-p.block
	})
}

func (p *progressRecorder) seen() []ports.Progress {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ports.Progress(nil), p.got...)
}

// A flood of progress notifications never blocks the session's
// notification path, even while the caller's callback is busy, and is
// coalesced: the caller sees the latest, not a queue.
func TestProgressFloodIsCoalesced(t *testing.T) {
	const flood = 100_000
	for _, viaCtx := range []bool{false, true} {
		name := "OnProgress"
		if viaCtx {
			name = "WithProgress"
		}
		t.Run(name, func(t *testing.T) {
			rec := newProgressRecorder()
			sc := script("1", "a")
			sc.Call = func(_ context.Context, r ports.CallRequest) (ports.CallResult, error) {
				r.OnProgress(ports.Progress{Progress: 1, Total: flood})
				recv(t, rec.first) // the caller's callback is now blocked
				for i := 2; i <= flood; i++ {
					r.OnProgress(ports.Progress{Progress: float64(i), Total: flood, Message: "step"})
				}
				close(rec.block) // the flood is through while it was blocked
				return ports.CallResult{}, nil
			}
			f := newFixture(t, sc, ports.TransportHTTP, nil)
			f.connect(t)
			ctx := context.Background()
			req := ports.CallRequest{Name: "a"}
			if viaCtx {
				ctx = ports.WithProgress(ctx, rec.on)
			} else {
				req.OnProgress = rec.on
			}
			_, err := f.srv.Call(ctx, req)
			require.NoError(t, err)
			got := rec.seen()
			require.NotEmpty(t, got)
			assert.LessOrEqual(t, len(got), 3, "coalesced, not queued")
			assert.Equal(t, ports.Progress{Progress: 1, Total: flood}, got[0])
			assert.Equal(t, ports.Progress{Progress: flood, Total: flood, Message: "step"}, got[len(got)-1], "the latest arrives before Call returns")
		})
	}
}

// The callback is never called once Call has returned, even when the
// session (misbehaving) reports progress later.
func TestNoProgressAfterCallReturned(t *testing.T) {
	var late func(ports.Progress)
	sc := script("1", "a")
	sc.Call = func(_ context.Context, r ports.CallRequest) (ports.CallResult, error) {
		late = r.OnProgress
		return ports.CallResult{}, nil
	}
	f := newFixture(t, sc, ports.TransportHTTP, &Options{CallTimeout: 10 * time.Millisecond})
	f.connect(t)
	var n atomic.Int32
	_, err := f.srv.Call(context.Background(), ports.CallRequest{Name: "a", OnProgress: func(ports.Progress) { n.Add(1) }})
	require.NoError(t, err)
	require.NotNil(t, late)
	late(ports.Progress{Progress: 1})
	assert.Zero(t, n.Load())
	// Nor does late progress re-arm anything: the next call is unaffected.
	_, err = f.srv.Call(context.Background(), ports.CallRequest{Name: "a"})
	require.NoError(t, err)
}
