package supervisor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// toolLists counts the tools Lists that reached s.
func toolLists(s *portstest.Session) int {
	n := 0
	for _, l := range s.Lists() {
		if l.Kind == ports.ListTools {
			n++
		}
	}
	return n
}

func TestRefreshReplacesCatalog(t *testing.T) {
	f := newFixture(t, script("1", "a", "b"), ports.TransportHTTP, nil)
	f.connect(t)
	before := f.srv.Catalog()
	require.NoError(t, f.srv.Refresh(context.Background()))
	after := f.srv.Catalog()
	require.NotNil(t, after)
	assert.NotSame(t, before, after)
	assert.Equal(t, 2, len(after.Tools))
	assert.False(t, after.Stale)
	assert.Equal(t, 2, toolLists(f.session(t, 0)))
}

func TestFailedRefreshKeepsStaleCatalog(t *testing.T) {
	tests := []struct {
		name    string
		refresh func(t *testing.T, f *fixture) error
	}{
		{"explicit Refresh", func(t *testing.T, f *fixture) error {
			return f.srv.Refresh(context.Background())
		}},
		{"list_changed signal", func(t *testing.T, f *fixture) error {
			require.True(t, f.session(t, 0).FireListChanged(ports.ListTools))
			st := f.rec.await(t, f.srv, "a failed refresh", func(st Status) bool { return st.Err != nil })
			return st.Err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, script("1", "a", "b"), ports.TransportHTTP, nil)
			f.connect(t)
			good := f.srv.Catalog()
			f.session(t, 0).FailOnce("List", refusal.New(refusal.Protocol, "malformed_reply", serverID))

			err := tt.refresh(t, f)
			requireRefusal(t, err, refusal.Protocol, "malformed_reply")
			st := f.srv.Status()
			assert.Equal(t, Ready, st.State, "a failed refresh does not end the session")
			requireRefusal(t, st.Err, refusal.Protocol, "malformed_reply")
			require.NotNil(t, st.Catalog, "a failed refresh emptied the catalog")
			assert.True(t, st.Catalog.Stale)
			assert.Equal(t, len(good.Tools), len(st.Catalog.Tools))
			assert.Equal(t, good.Identity, st.Catalog.Identity)
			assert.False(t, good.Stale, "the previous catalog was modified in place")

			// The next successful refresh clears both.
			require.NoError(t, f.srv.Refresh(context.Background()))
			st = f.srv.Status()
			assert.Nil(t, st.Err)
			assert.False(t, st.Catalog.Stale)
			assert.Equal(t, 2, len(st.Catalog.Tools))
		})
	}
}

func TestListChangedStormIsCoalesced(t *testing.T) {
	f, g := newGatedFixture(t, script("1", "a"), nil)
	f.connect(t)
	sess := f.session(t, 0)
	require.Equal(t, 1, toolLists(sess))

	g.hold()
	require.True(t, sess.FireListChanged(ports.ListTools))
	recv(t, g.entered) // the first refresh is running, blocked in List
	for range 1000 {
		require.True(t, sess.FireListChanged(ports.ListTools))
	}
	g.release()
	// One running and one pending refresh: exactly two more Lists.
	f.rec.await(t, f.srv, "two refreshes", func(Status) bool { return toolLists(sess) >= 3 })
	// Let the pending one finish applying; then nothing is pending.
	require.NoError(t, f.srv.Refresh(context.Background())) // waits for any running refresh
	assert.Equal(t, 4, toolLists(sess), "1 discovery + 1 running + 1 pending + 1 explicit")
	f.srv.mu.Lock()
	c := f.srv.cur
	f.srv.mu.Unlock()
	assert.Empty(t, c.kick, "a refresh is still pending after the storm")
	assert.Len(t, g.entered, 0)
}

func TestListChangedDuringFirstDiscoveryRefreshesOnce(t *testing.T) {
	f, g := newGatedFixture(t, script("1", "a"), nil)
	g.hold()
	done := f.connectAsync(context.Background())
	recv(t, g.entered) // first discovery blocked
	sess := f.session(t, 0)
	for range 50 {
		sess.FireListChanged(ports.ListTools)
	}
	g.release()
	require.NoError(t, recv(t, done))
	// The discovery may have missed the change: one refresh follows.
	f.rec.await(t, f.srv, "the follow-up refresh", func(Status) bool { return toolLists(sess) == 2 })
	require.NoError(t, f.srv.Refresh(context.Background()))
	assert.Equal(t, 3, toolLists(sess))
}

func TestRefreshCancelledChangesNothing(t *testing.T) {
	f, g := newGatedFixture(t, script("1", "a"), nil)
	f.connect(t)
	before := f.srv.Catalog()
	g.hold()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.srv.Refresh(ctx) }()
	recv(t, g.entered)
	cancel()
	requireRefusal(t, recv(t, done), refusal.Transient, ReasonCancelled)
	st := f.srv.Status()
	assert.Same(t, before, st.Catalog)
	assert.Nil(t, st.Err)
}

func TestRefreshWhenNotReady(t *testing.T) {
	f := newFixture(t, script("1", "a"), ports.TransportHTTP, nil)
	requireRefusal(t, f.srv.Refresh(context.Background()), refusal.Transient, ReasonServerUnavailable)
	f.conn.FailOnce("Connect", refusal.New(refusal.Config, "bad_definition", serverID))
	require.Error(t, recv(t, f.connectAsync(context.Background())))
	requireRefusal(t, f.srv.Refresh(context.Background()), refusal.Config, ReasonServerUnavailable)
}

func TestRefreshLosingSession(t *testing.T) {
	f, g := newGatedFixture(t, script("1", "a"), disconnectOpts(3))
	f.connect(t)
	g.hold()
	done := make(chan error, 1)
	go func() { done <- f.srv.Refresh(context.Background()) }()
	recv(t, g.entered)
	f.session(t, 0).Disconnect()
	f.clock.blockUntil(t, 1) // the reconnect sleeps: the session is gone
	g.release()
	err := recv(t, done)
	require.Error(t, err)
	assert.Equal(t, refusal.Transient, refusal.ClassOf(err))
	st := f.srv.Status()
	assert.Equal(t, Backoff, st.State)
	requireRefusal(t, st.Err, refusal.Transient, ReasonDisconnected)
}

func TestIdentityChangeInvalidatesAtOnce(t *testing.T) {
	for _, field := range []string{"ServerVersion", "ProtocolVersion"} {
		t.Run(field, func(t *testing.T) {
			f, g := newGatedFixture(t, script("1", "a", "b"), disconnectOpts(3))
			f.connect(t)
			old := f.srv.Catalog()
			require.Equal(t, 2, len(old.Tools))

			next := script("1", "c")
			switch field {
			case "ServerVersion":
				next.Identity.ServerVersion = "2"
			case "ProtocolVersion":
				next.Identity.ProtocolVersion = "2025-06-18"
			}
			// The new server's first discovery fails too: even then the
			// old catalog must not come back.
			next.OnSession = func(s *portstest.Session) {
				s.FailOnce("List", refusal.New(refusal.Transient, "list_down", serverID))
			}
			f.conn.SetScript(serverID, next)
			g.hold()
			f.session(t, 0).Disconnect()
			f.clock.blockUntil(t, 1)
			// While reconnecting the old catalog is kept, marked stale.
			kept := f.srv.Catalog()
			require.NotNil(t, kept)
			assert.True(t, kept.Stale)
			assert.Equal(t, old.Identity, kept.Identity)
			f.clock.Advance(time.Hour)
			recv(t, g.entered) // the new session is open, its discovery blocked
			assert.Nil(t, f.srv.Catalog(), "the old catalog survived an identity change")
			assert.Equal(t, Connecting, f.srv.Status().State)
			g.release()

			st := f.rec.awaitState(t, f.srv, Ready)
			requireRefusal(t, st.Err, refusal.Transient, "list_down")
			require.NotNil(t, st.Catalog)
			assert.Equal(t, next.Identity.ServerVersion, st.Catalog.Identity.ServerVersion)
			assert.Equal(t, next.Identity.ProtocolVersion, st.Catalog.Identity.ProtocolVersion)
			assert.False(t, st.Catalog.Complete(), "a failed discovery built a complete catalog")
			assert.Empty(t, st.Catalog.Tools)

			// No snapshot after the drop carried the old catalog again.
			phase := 0 // 0: first session; 1: disconnected; 2: dropped
			for _, s := range f.rec.snapshots() {
				switch {
				case phase == 0 && s.State == Backoff:
					phase = 1
				case phase == 1 && s.Catalog == nil:
					phase = 2
				case phase == 2 && s.Catalog != nil:
					assert.NotEqual(t, old.Identity, s.Catalog.Identity)
				}
			}
			sawNil := phase == 2
			assert.True(t, sawNil)
		})
	}
}

func TestSameIdentityFailedRediscoveryKeepsStale(t *testing.T) {
	f := newFixture(t, script("1", "a", "b"), ports.TransportHTTP, disconnectOpts(3))
	f.connect(t)
	old := f.srv.Catalog()
	next := script("1", "a", "b")
	next.OnSession = func(s *portstest.Session) {
		s.FailOnce("List", refusal.New(refusal.Transient, "list_down", serverID))
	}
	f.conn.SetScript(serverID, next)
	f.session(t, 0).Disconnect()
	f.clock.blockUntil(t, 1)
	f.clock.Advance(time.Hour)
	st := f.rec.await(t, f.srv, "ready on the second session", func(st Status) bool {
		return st.State == Ready && len(f.conn.Sessions()) == 2
	})
	requireRefusal(t, st.Err, refusal.Transient, "list_down")
	require.NotNil(t, st.Catalog)
	assert.True(t, st.Catalog.Stale)
	assert.Equal(t, old.Identity, st.Catalog.Identity)
	assert.Equal(t, len(old.Tools), len(st.Catalog.Tools))

	// The stale catalog's tools call through the new session.
	_, err := f.srv.Call(context.Background(), ports.CallRequest{Name: "a"})
	require.NoError(t, err)
	assert.Len(t, f.session(t, 1).CallRequests(), 1)

	// A later refresh clears the staleness.
	require.NoError(t, f.srv.Refresh(context.Background()))
	assert.False(t, f.srv.Catalog().Stale)
	assert.Nil(t, f.srv.Status().Err)
}

func TestFirstDiscoveryFailureKeepsSessionWithPartialCatalog(t *testing.T) {
	sc := script("1", "a")
	sc.OnSession = func(s *portstest.Session) {
		s.FailOnce("List", refusal.New(refusal.Transient, "list_down", serverID))
	}
	f := newFixture(t, sc, ports.TransportHTTP, nil)
	f.connect(t)
	st := f.srv.Status()
	requireRefusal(t, st.Err, refusal.Transient, "list_down")
	require.NotNil(t, st.Catalog)
	assert.False(t, st.Catalog.Complete())
	assert.NotEmpty(t, st.Catalog.Partial)
	assert.Equal(t, 1, f.conn.Calls("Connect"))
	require.NoError(t, f.srv.Refresh(context.Background()))
	assert.True(t, f.srv.Catalog().Complete())
	assert.Len(t, f.srv.Catalog().Tools, 1)
}

func TestSessionLostDuringFirstDiscoveryIsAFailedAttempt(t *testing.T) {
	f, g := newGatedFixture(t, script("1", "a"), &Options{MaxAttempts: 2})
	g.hold()
	done := f.connectAsync(context.Background())
	recv(t, g.entered)
	f.session(t, 0).Disconnect()
	g.release()
	f.clock.blockUntil(t, 1)
	st := f.srv.Status()
	assert.Equal(t, Backoff, st.State)
	requireRefusal(t, st.Err, refusal.Transient, ReasonDisconnected)
	assert.Nil(t, st.Catalog)
	f.clock.Advance(time.Hour)
	require.NoError(t, recv(t, done))
	assert.Len(t, f.conn.Sessions(), 2)
}

// A refresh of a session that was replaced meanwhile must not install its
// catalog beside the new session (of another identity here).
func TestLateRefreshOfReplacedSessionIsDiscarded(t *testing.T) {
	f, g := newGatedFixture(t, script("1", "a", "b"), disconnectOpts(3))
	f.connect(t)
	g.configure(false, true, f.session(t, 0))
	g.hold()
	done := make(chan error, 1)
	go func() { done <- f.srv.Refresh(context.Background()) }()
	recv(t, g.entered) // session 0 answered; the answer is held

	f.conn.SetScript(serverID, script("2", "c"))
	f.session(t, 0).Disconnect()
	f.clock.blockUntil(t, 1)
	f.clock.Advance(time.Hour)
	st := f.rec.await(t, f.srv, "ready on the second session", func(st Status) bool {
		return st.State == Ready && len(f.conn.Sessions()) == 2
	})
	require.Equal(t, "2", st.Catalog.Identity.ServerVersion)

	g.release()
	requireRefusal(t, recv(t, done), refusal.Transient, ReasonDisconnected)
	st = f.srv.Status()
	assert.Equal(t, "2", st.Catalog.Identity.ServerVersion, "a late refresh installed the old server's catalog")
	assert.Len(t, st.Catalog.Tools, 1)
	assert.False(t, st.Catalog.Stale)
	assert.Nil(t, st.Err)
}
