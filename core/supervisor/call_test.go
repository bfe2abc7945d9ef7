package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

func TestCallPassesThrough(t *testing.T) {
	sc := script("1", "echo")
	sc.Call = func(_ context.Context, r ports.CallRequest) (ports.CallResult, error) {
		return ports.CallResult{Content: r.Arguments}, nil
	}
	f := newFixture(t, sc, ports.TransportHTTP, nil)
	f.connect(t)
	req := ports.CallRequest{Name: "echo", Arguments: json.RawMessage(`{"x":1}`), Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	res, err := f.srv.Call(context.Background(), req)
	require.NoError(t, err)
	assert.JSONEq(t, `{"x":1}`, string(res.Content))
	got := f.session(t, 0).CallRequests()
	require.Len(t, got, 1)
	assert.Nil(t, got[0].OnProgress, "no progress asked for, none requested")
	assert.Equal(t, []ports.CallRequest{req}, got)
}

func TestFailedCallIsNeverReplayed(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		class  refusal.Class
		reason string
	}{
		{"transient", refusal.New(refusal.Transient, "server_busy", serverID), refusal.Transient, "server_busy"},
		{"protocol", refusal.New(refusal.Protocol, "oversized_result", ""), refusal.Protocol, "oversized_result"},
		{"unclassified", errors.New("https://example.test/path?token=x"), refusal.Internal, ReasonUnclassified},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := script("1", "a")
			sc.Call = func(context.Context, ports.CallRequest) (ports.CallResult, error) {
				return ports.CallResult{}, tt.err
			}
			f := newFixture(t, sc, ports.TransportHTTP, nil)
			f.connect(t)
			_, err := f.srv.Call(context.Background(), ports.CallRequest{Name: "a"})
			e := requireRefusal(t, err, tt.class, tt.reason)
			assert.NotContains(t, e.Error(), "token")
			assert.Len(t, f.session(t, 0).CallRequests(), 1, "the call was replayed")
			assert.Equal(t, Ready, f.srv.Status().State)
			assert.Equal(t, 1, f.conn.Calls("Connect"))
		})
	}
}

func TestCallLostWithSessionIsNotReplayedOnTheNext(t *testing.T) {
	started := make(chan struct{}, 1)
	sc := script("1", "a")
	sc.Call = func(ctx context.Context, _ ports.CallRequest) (ports.CallResult, error) {
		started <- struct{}{}
		<-ctx.Done()
		return ports.CallResult{}, portstest.ErrSessionClosed
	}
	f := newFixture(t, sc, ports.TransportHTTP, disconnectOpts(3))
	f.connect(t)
	done := make(chan error, 1)
	go func() {
		_, err := f.srv.Call(context.Background(), ports.CallRequest{Name: "a"})
		done <- err
	}()
	recv(t, started)
	f.session(t, 0).Disconnect()
	requireRefusal(t, recv(t, done), refusal.Transient, ReasonDisconnected)
	f.clock.blockUntil(t, 1)
	f.clock.Advance(time.Hour)
	f.rec.await(t, f.srv, "reconnected", func(st Status) bool {
		return st.State == Ready && len(f.conn.Sessions()) == 2
	})
	assert.Len(t, f.session(t, 0).CallRequests(), 1)
	assert.Empty(t, f.session(t, 1).CallRequests(), "the lost call was replayed on the new session")
}

func TestCallNotReady(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		f := newFixture(t, script("1", "a"), ports.TransportHTTP, nil)
		_, err := f.srv.Call(context.Background(), ports.CallRequest{Name: "a"})
		requireRefusal(t, err, refusal.Transient, ReasonServerUnavailable)
	})
	t.Run("connecting", func(t *testing.T) {
		release := make(chan struct{})
		sc := script("1", "a")
		sc.OnConnect = func(context.Context, ports.Target) error { <-release; return nil }
		f := newFixture(t, sc, ports.TransportHTTP, nil)
		done := f.connectAsync(context.Background())
		f.rec.awaitState(t, f.srv, Connecting)
		_, err := f.srv.Call(context.Background(), ports.CallRequest{Name: "a"})
		requireRefusal(t, err, refusal.Transient, ReasonServerUnavailable)
		close(release)
		require.NoError(t, recv(t, done))
	})
	t.Run("failed", func(t *testing.T) {
		f := newFixture(t, script("1", "a"), ports.TransportHTTP, nil)
		f.conn.FailOnce("Connect", refusal.New(refusal.AuthRequired, "sign_in_required", serverID))
		require.Error(t, recv(t, f.connectAsync(context.Background())))
		_, err := f.srv.Call(context.Background(), ports.CallRequest{Name: "a"})
		requireRefusal(t, err, refusal.AuthRequired, ReasonServerUnavailable)
	})
}

// blockingCall is a script whose calls wait for their ctx and report it.
func blockingCall(started chan<- struct{}) portstest.SessionScript {
	sc := script("1", "slow")
	sc.Call = func(ctx context.Context, _ ports.CallRequest) (ports.CallResult, error) {
		started <- struct{}{}
		<-ctx.Done()
		return ports.CallResult{}, ctx.Err()
	}
	return sc
}

func TestAbortedStdioCallClosesSession(t *testing.T) {
	tests := []struct {
		name   string
		ctx    func() (context.Context, context.CancelFunc)
		abort  bool // cancel after the call started
		reason string
	}{
		{"cancel", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, true, ReasonCancelled},
		{"timeout", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 20*time.Millisecond)
		}, false, ReasonTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			started := make(chan struct{}, 1)
			f := newFixture(t, blockingCall(started), ports.TransportStdio, disconnectOpts(2))
			f.connect(t)
			ctx, cancel := tt.ctx()
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := f.srv.Call(ctx, ports.CallRequest{Name: "slow"})
				// The session is closed before Call returns.
				if !f.conn.Sessions()[0].CloseCalled() {
					done <- errors.New("Call returned before closing the session")
					return
				}
				done <- err
			}()
			recv(t, started)
			if tt.abort {
				cancel()
			}
			requireRefusal(t, recv(t, done), refusal.Transient, tt.reason)
			assert.Zero(t, f.session(t, 0).InFlight())

			// The server comes back at once: no backoff sleep, no
			// disconnect counted, even though it happens repeatedly.
			for i := 1; i <= 3; i++ {
				st := f.rec.await(t, f.srv, "recycled", func(st Status) bool {
					return st.State == Ready && len(f.conn.Sessions()) == i+1
				})
				assert.Zero(t, st.Disconnects)
				assert.Empty(t, f.clock.Sleeps())
				if i == 3 {
					break
				}
				ctx, cancel := context.WithCancel(context.Background())
				go func() { <-started; cancel() }()
				_, err := f.srv.Call(ctx, ports.CallRequest{Name: "slow"})
				requireRefusal(t, err, refusal.Transient, ReasonCancelled)
				assert.True(t, f.session(t, i).CloseCalled())
			}
			for i, s := range f.conn.Sessions() {
				assert.Len(t, s.CallRequests(), min(1, 3-i), "session %d", i)
			}
		})
	}
}

func TestAbortedHTTPCallKeepsSession(t *testing.T) {
	started := make(chan struct{}, 1)
	f := newFixture(t, blockingCall(started), ports.TransportHTTP, nil)
	f.connect(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := f.srv.Call(ctx, ports.CallRequest{Name: "slow"})
	requireRefusal(t, err, refusal.Transient, ReasonCancelled)
	assert.False(t, f.session(t, 0).CloseCalled())
	assert.Equal(t, Ready, f.srv.Status().State)
	assert.Len(t, f.conn.Sessions(), 1)
}

func TestStdioCallThatSucceedsKeepsSession(t *testing.T) {
	f := newFixture(t, script("1", "a"), ports.TransportStdio, nil)
	f.connect(t)
	_, err := f.srv.Call(context.Background(), ports.CallRequest{Name: "a"})
	require.NoError(t, err)
	// A failing call whose ctx is alive is not an abort.
	f.session(t, 0).FailOnce("Call", refusal.New(refusal.Protocol, "bad_result", serverID))
	_, err = f.srv.Call(context.Background(), ports.CallRequest{Name: "a"})
	requireRefusal(t, err, refusal.Protocol, "bad_result")
	assert.False(t, f.session(t, 0).CloseCalled())
	assert.Equal(t, Ready, f.srv.Status().State)
}

// The stdio adapter may close the session itself when a call is abandoned
// (its Done closing before Call returns): that is not a disconnect either.
func TestAdapterClosingForAbandonedCallIsNotADisconnect(t *testing.T) {
	var f *fixture
	started := make(chan struct{}, 1)
	sc := script("1", "slow")
	sc.Call = func(ctx context.Context, _ ports.CallRequest) (ports.CallResult, error) {
		started <- struct{}{}
		<-ctx.Done()
		// The adapter kills the child: the session ends on its own...
		ss := f.conn.Sessions()
		ss[len(ss)-1].Disconnect()
		// ...and the supervisor sees it before this call returns.
		deadline := time.Now().Add(wait)
		for f.srv.Status().State == Ready && len(f.conn.Sessions()) == 1 && time.Now().Before(deadline) {
			time.Sleep(100 * time.Microsecond)
		}
		return ports.CallResult{}, ctx.Err()
	}
	f = newFixture(t, sc, ports.TransportStdio, disconnectOpts(2))
	f.connect(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := f.srv.Call(ctx, ports.CallRequest{Name: "slow"})
	requireRefusal(t, err, refusal.Transient, ReasonCancelled)
	st := f.rec.await(t, f.srv, "recycled", func(st Status) bool {
		return st.State == Ready && len(f.conn.Sessions()) == 2
	})
	assert.Zero(t, st.Disconnects)
	assert.Empty(t, f.clock.Sleeps())
	for _, s := range f.rec.snapshots() {
		assert.NotEqual(t, Backoff, s.State)
	}
}

// TestStdioCallAfterCancelNotSent: over stdio, from the moment a call's
// ctx is cancelled (its session about to be closed for it), before that
// call has even returned, a new call is refused not_connected (Class
// Transient) and nothing of it is sent on the doomed session.
func TestStdioCallAfterCancelNotSent(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	sc := script("1", "slow")
	sc.Call = func(ctx context.Context, _ ports.CallRequest) (ports.CallResult, error) {
		started <- struct{}{}
		select {
		case <-release: // a session slow to notice the cancel
		case <-time.After(5 * time.Second):
		}
		return ports.CallResult{}, ctx.Err()
	}
	f := newFixture(t, sc, ports.TransportStdio, nil)
	f.connect(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.srv.Call(ctx, ports.CallRequest{Name: "slow"})
		done <- err
	}()
	recv(t, started)
	cancel()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	_, err := f.srv.Call(ctx2, ports.CallRequest{Name: "slow"})
	requireRefusal(t, err, refusal.Transient, ReasonServerUnavailable)
	assert.Len(t, f.session(t, 0).CallRequests(), 1, "the second call was not sent")
	close(release)
	requireRefusal(t, recv(t, done), refusal.Transient, ReasonCancelled)
}
