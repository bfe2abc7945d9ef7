//go:build linux || darwin

package stdiotransport

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpward/mcpward/core/refusal"
)

// TestExitStatus: Stats says how the child ended and whether that was its
// own doing, and the stderr tail keeps what it said.
func TestExitStatus(t *testing.T) {
	defer goleak.VerifyNone(t)

	t.Run("exit before initialize", func(t *testing.T) {
		w := newWorld(t)
		tr, err := New(w.auth, fastOptions()).Transport(context.Background(), w.target("-exit", "3"))
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err = newClient().Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		require.Error(t, err)
		require.True(t, tr.WaitExited(10*time.Second))
		st := tr.Stats()
		assert.Equal(t, "exit status 3", st.ExitStatus)
		assert.True(t, st.ExitedOnItsOwn, "nothing ended it but itself")
		assert.Equal(t, "fatal: missing API key\n", tr.StderrTail())
		assert.NoError(t, tr.Err(), "an exit is not a protocol breach")
	})

	t.Run("crash after a healthy start", func(t *testing.T) {
		w := newWorld(t)
		tr, err := New(w.auth, fastOptions()).Transport(context.Background(), w.target())
		require.NoError(t, err)
		cs := connect(t, tr)
		assert.Equal(t, "up", mustCall(t, cs, "echo", map[string]any{"text": "up"}))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, err = callText(ctx, cs, "exit", map[string]any{"n": 5})
		require.Error(t, err)
		require.True(t, tr.WaitExited(10*time.Second))
		_ = cs.Close()
		st := tr.Stats()
		assert.Equal(t, "exit status 5", st.ExitStatus)
		assert.True(t, st.ExitedOnItsOwn)
		assert.Equal(t, "exiting on request\n", tr.StderrTail())
	})

	t.Run("a graceful close is not the child's own exit", func(t *testing.T) {
		w := newWorld(t)
		tr, err := New(w.auth, fastOptions()).Transport(context.Background(), w.target())
		require.NoError(t, err)
		cs := connect(t, tr)
		require.NoError(t, cs.Close())
		st := tr.Stats()
		require.True(t, st.Exited)
		assert.Equal(t, "exit status 0", st.ExitStatus)
		assert.False(t, st.ExitedOnItsOwn, "it exited because its stdin closed")
	})

	t.Run("kill", func(t *testing.T) {
		w := newWorld(t)
		tr, err := New(w.auth, fastOptions()).Transport(context.Background(), w.target())
		require.NoError(t, err)
		cs := connect(t, tr)
		require.NoError(t, tr.Kill())
		_ = cs.Close()
		st := tr.Stats()
		require.True(t, st.Exited)
		assert.Equal(t, "signal: killed", st.ExitStatus)
		assert.False(t, st.ExitedOnItsOwn)
	})

	t.Run("never started", func(t *testing.T) {
		w := newWorld(t)
		tr, err := New(w.auth, fastOptions()).Transport(context.Background(), w.target())
		require.NoError(t, err)
		assert.False(t, tr.WaitExited(time.Millisecond))
		assert.Equal(t, Stats{}, tr.Stats())
		assert.Empty(t, tr.StderrTail())
		require.NoError(t, tr.Close())
	})
}

// TestStderrTailOfChild: a child's stderr flood leaves a bounded tail of
// whole lines.
func TestStderrTailOfChild(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newWorld(t)
	tr, err := New(w.auth, fastOptions()).Transport(context.Background(), w.target())
	require.NoError(t, err)
	cs := connect(t, tr)
	const n = 19 * 55000 // whole "secret-stderr-line\n" lines
	assert.Equal(t, "flooded", mustCall(t, cs, "flood", map[string]any{"n": n}))
	require.NoError(t, cs.Close())
	tail := tr.StderrTail()
	assert.LessOrEqual(t, len(tail), StderrTailBytes)
	lines := strings.Split(strings.TrimSuffix(tail, "\n"), "\n")
	assert.Len(t, lines, StderrTailLines)
	for _, l := range lines {
		assert.Equal(t, "secret-stderr-line", l, "whole lines only")
	}
	assert.Equal(t, int64(n), tr.Stats().StderrBytes)
}

// TestMalformedLine: a line that is not JSON-RPC ends the connection with
// Class Protocol "malformed_message", which Err keeps for the calls after.
func TestMalformedLine(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newWorld(t)
	tr, err := New(w.auth, fastOptions()).Transport(context.Background(), w.target())
	require.NoError(t, err)
	cs := connect(t, tr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = callText(ctx, cs, "garbage", map[string]any{})
	requireRefusal(t, err, refusal.Protocol, "malformed_message", "this is not json")
	assert.Equal(t, "malformed_message", refusal.ReasonOf(tr.Err()))
	_, err = callText(ctx, cs, "echo", map[string]any{"text": "after"})
	assert.ErrorIs(t, err, mcp.ErrConnectionClosed, "the session is over")
	_ = cs.Close()
	assert.True(t, tr.Stats().Exited)
}

// TestEndlessGarbageLine: a line of garbage that never ends is the
// receive cap's breach, though the SDK's decoder fails at its first byte.
func TestEndlessGarbageLine(t *testing.T) {
	defer goleak.VerifyNone(t)
	w := newWorld(t)
	opts := fastOptions()
	opts.MaxLineLength = 64 << 10
	tr, err := New(w.auth, opts).Transport(context.Background(), w.target())
	require.NoError(t, err)
	cs := connect(t, tr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = callText(ctx, cs, "endless", map[string]any{})
	requireRefusal(t, err, refusal.Protocol, "receive_cap_exceeded")
	assert.Equal(t, "receive_cap_exceeded", refusal.ReasonOf(tr.Err()))
	_ = cs.Close()
	assert.True(t, tr.Stats().Exited)
}

// TestInboundFilter: the filter sees every notification the child sends
// before the SDK does, and what it refuses never reaches the SDK.
func TestInboundFilter(t *testing.T) {
	defer goleak.VerifyNone(t)
	const n = 5000
	for _, filtered := range []bool{true, false} {
		w := newWorld(t)
		tr, err := New(w.auth, fastOptions()).Transport(context.Background(), w.target())
		require.NoError(t, err)
		var judged, handled atomic.Int64
		if filtered {
			tr.SetInboundFilter(func(method string, call bool) bool {
				judged.Add(1)
				return method != "notifications/message"
			})
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "stdiotransport-test", Version: "1"}, &mcp.ClientOptions{
			Capabilities:          &mcp.ClientCapabilities{},
			MultiRoundTrip:        &mcp.MultiRoundTripOptions{Disabled: true},
			LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) { handled.Add(1) },
		})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		require.NoError(t, err)
		assert.Equal(t, "notified", mustCall(t, cs, "notify", map[string]any{"n": n}))
		assert.Equal(t, "after", mustCall(t, cs, "echo", map[string]any{"text": "after"}), "responses always pass")
		if filtered {
			assert.EqualValues(t, n, judged.Load(), "every notification judged, no response")
			assert.Zero(t, handled.Load(), "none reached the SDK")
		} else {
			assert.Eventually(t, func() bool { return handled.Load() == n }, 10*time.Second, time.Millisecond)
		}
		tr.SetInboundFilter(nil)
		require.NoError(t, cs.Close())
		cancel()
	}
}
