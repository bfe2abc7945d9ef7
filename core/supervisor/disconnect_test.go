package supervisor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

const ms = time.Millisecond

// disconnectOpts: 100ms base, 1s cap, jitter 0.5 (fixture) → 75, 150, 300…
func disconnectOpts(max int) *Options {
	return &Options{MaxAttempts: max, BaseDelay: 100 * ms, MaxDelay: time.Second, StableAfter: time.Minute}
}

func TestDisconnectReconnectsWithBackoff(t *testing.T) {
	f := newFixture(t, script("1", "a"), ports.TransportHTTP, disconnectOpts(3))
	f.connect(t)
	first := f.srv.Catalog()

	f.session(t, 0).Disconnect()
	f.clock.blockUntil(t, 1)
	st := f.srv.Status()
	assert.Equal(t, Backoff, st.State)
	assert.Equal(t, 1, st.Disconnects)
	requireRefusal(t, st.Err, refusal.Transient, ReasonDisconnected)
	// The retained catalog stays, marked stale, while reconnecting.
	require.NotNil(t, st.Catalog)
	assert.True(t, st.Catalog.Stale)
	assert.False(t, first.Stale, "the installed catalog was modified in place")
	assert.True(t, f.session(t, 0).CloseCalled(), "the lost session was not closed")
	// Nothing is sent while not Ready.
	_, err := f.srv.Call(context.Background(), ports.CallRequest{Name: "a"})
	requireRefusal(t, err, refusal.Transient, ReasonServerUnavailable)

	f.clock.Advance(75*ms - 1)
	assert.Equal(t, 1, f.clock.Sleepers())
	assert.Equal(t, 1, f.conn.Calls("Connect"))
	f.clock.Advance(1)
	st = f.rec.awaitState(t, f.srv, Ready)
	assert.Equal(t, 2, f.conn.Calls("Connect"))
	assert.Nil(t, st.Err)
	require.NotNil(t, st.Catalog)
	assert.False(t, st.Catalog.Stale)
	assert.Equal(t, 1, st.Disconnects)
	assert.Equal(t, []time.Duration{75 * ms}, f.clock.Sleeps())
	assert.Equal(t, []State{Connecting, Ready, Backoff, Connecting, Ready}, f.rec.states())
}

func TestRepeatedDisconnectsEndInFailed(t *testing.T) {
	f := newFixture(t, script("1", "a"), ports.TransportHTTP, disconnectOpts(3))
	f.connect(t)
	for i := range 2 {
		f.session(t, i).Disconnect()
		f.clock.blockUntil(t, 1)
		f.clock.Advance(time.Hour)
		f.rec.await(t, f.srv, "reconnected", func(st Status) bool {
			return st.State == Ready && len(f.conn.Sessions()) == i+2
		})
	}
	f.session(t, 2).Disconnect()
	st := f.rec.awaitState(t, f.srv, Failed)
	requireRefusal(t, st.Err, refusal.Transient, ReasonDisconnected)
	assert.Equal(t, 3, st.Disconnects)
	// The delays grew with the disconnect count: d(1), d(2).
	assert.Equal(t, []time.Duration{75 * ms, 150 * ms}, f.clock.Sleeps())

	// Failed is explicit: no loop, no sleep, no connect.
	assert.Zero(t, f.clock.Sleepers())
	f.clock.Advance(24 * time.Hour)
	assert.Equal(t, 3, f.conn.Calls("Connect"))
	assert.Equal(t, Failed, f.srv.Status().State)
	// A Call says why (the class of the failure) and sends nothing.
	_, err := f.srv.Call(context.Background(), ports.CallRequest{Name: "a"})
	requireRefusal(t, err, refusal.Transient, ReasonServerUnavailable)
	require.NotNil(t, f.srv.Catalog())
	assert.True(t, f.srv.Catalog().Stale)

	// A caller's Connect starts over with a fresh disconnect count.
	f.connect(t)
	assert.Zero(t, f.srv.Status().Disconnects)
	f.session(t, 3).Disconnect()
	f.clock.blockUntil(t, 1)
	assert.Equal(t, 1, f.srv.Status().Disconnects)
}

func TestStableSessionRestartsDisconnectCount(t *testing.T) {
	f := newFixture(t, script("1", "a"), ports.TransportHTTP, disconnectOpts(2))
	f.connect(t)
	for i := range 5 {
		f.clock.Advance(time.Minute) // up StableAfter
		f.session(t, i).Disconnect()
		f.clock.blockUntil(t, 1)
		assert.Equal(t, 1, f.srv.Status().Disconnects)
		f.clock.Advance(time.Hour)
		f.rec.await(t, f.srv, "reconnected", func(st Status) bool {
			return st.State == Ready && len(f.conn.Sessions()) == i+2
		})
	}
	for _, d := range f.clock.Sleeps() {
		assert.Equal(t, 75*ms, d)
	}
	// One minute minus a nanosecond is not stable: this disconnect follows
	// the last one, and two reach MaxAttempts.
	f.clock.Advance(time.Minute - 1)
	f.session(t, 5).Disconnect()
	st := f.rec.awaitState(t, f.srv, Failed)
	assert.Equal(t, 2, st.Disconnects)
	assert.Equal(t, 6, f.conn.Calls("Connect"))
}

func TestReconnectAttemptsAreBounded(t *testing.T) {
	f := newFixture(t, script("1", "a"), ports.TransportHTTP, disconnectOpts(3))
	f.connect(t)
	f.conn.Fail("Connect", refusal.New(refusal.Transient, "down", serverID))
	f.session(t, 0).Disconnect()
	// Sleep before the first reconnect (n=1), then after each failed
	// attempt (n = disconnects + attempts = 2, 3); the third failure ends it.
	for range 3 {
		f.clock.blockUntil(t, 1)
		f.clock.Advance(time.Hour)
	}
	st := f.rec.awaitState(t, f.srv, Failed)
	requireRefusal(t, st.Err, refusal.Transient, "down")
	assert.Equal(t, 3, st.Attempts)
	assert.Equal(t, 4, f.conn.Calls("Connect"))
	assert.Equal(t, []time.Duration{75 * ms, 150 * ms, 300 * ms}, f.clock.Sleeps())
	assert.Zero(t, f.clock.Sleepers())
}

func TestReconnectStopsOnNonTransient(t *testing.T) {
	f := newFixture(t, script("1", "a"), ports.TransportHTTP, disconnectOpts(5))
	f.connect(t)
	f.conn.FailOnce("Connect", refusal.New(refusal.AuthRefused, "token_refused", serverID))
	f.session(t, 0).Disconnect()
	f.clock.blockUntil(t, 1)
	f.clock.Advance(time.Hour)
	st := f.rec.awaitState(t, f.srv, Failed)
	requireRefusal(t, st.Err, refusal.AuthRefused, "token_refused")
	_, err := f.srv.Call(context.Background(), ports.CallRequest{Name: "a"})
	// In Failed a call reports the class of the failure.
	requireRefusal(t, err, refusal.AuthRefused, ReasonServerUnavailable)
	assert.Equal(t, 2, f.conn.Calls("Connect"))
}

func TestConnectJoinsBackgroundReconnect(t *testing.T) {
	f := newFixture(t, script("1", "a"), ports.TransportHTTP, disconnectOpts(3))
	f.connect(t)
	f.session(t, 0).Disconnect()
	f.clock.blockUntil(t, 1)
	done := f.connectAsync(context.Background())
	select {
	case err := <-done:
		t.Fatalf("Connect returned %v during the background reconnect", err)
	default:
	}
	f.clock.Advance(time.Hour)
	require.NoError(t, recv(t, done))
	assert.Equal(t, 2, f.conn.Calls("Connect"))
	// Joining did not reset the disconnect count.
	assert.Equal(t, 1, f.srv.Status().Disconnects)
}

func TestCloseDuringBackgroundBackoff(t *testing.T) {
	f := newFixture(t, script("1", "a"), ports.TransportHTTP, disconnectOpts(3))
	f.connect(t)
	f.session(t, 0).Disconnect()
	f.clock.blockUntil(t, 1)
	require.NoError(t, f.srv.Close())
	assert.Zero(t, f.clock.Sleepers())
	assert.Equal(t, Closed, f.srv.Status().State)
	assert.Nil(t, f.srv.Catalog())
	assert.Equal(t, 1, f.conn.Calls("Connect"))
}
