package supervisor

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// TestPlainBound: a call that asks for no progress is bounded by the idle
// window capped by the maximum, the defaults standing in for zero.
func TestPlainBound(t *testing.T) {
	tests := []struct {
		idle, max time.Duration
		want      time.Duration
	}{
		{0, 0, DefaultCallTimeout},
		{time.Second, 0, time.Second},
		{time.Minute, 2 * time.Second, 2 * time.Second},
		{NoTimeout, 3 * time.Second, 3 * time.Second},
		{4 * time.Second, NoTimeout, 4 * time.Second},
		{NoTimeout, NoTimeout, 0},
	}
	for _, tt := range tests {
		s := New(portstest.NewConnector(script("1", "echo")), ports.Target{ServerID: serverID}, &Options{CallTimeout: tt.idle, CallTimeoutMax: tt.max})
		assert.Equal(t, tt.want, s.plainBound(), "idle %v max %v", tt.idle, tt.max)
		require.NoError(t, s.Close())
	}
}

// TestCallAllocations bounds what Server.Call adds to the session's call
// when the caller asks for no progress: the call's context with its cancel
// function and timer, and what the session's context costs once it has a
// cancelable parent. It was 7 when every call opened a progress window.
func TestCallAllocations(t *testing.T) {
	sc := script("1", "echo")
	sc.Call = func(ctx context.Context, r ports.CallRequest) (ports.CallResult, error) {
		c, cancel := context.WithCancel(ctx) // as a session joins its own context
		defer cancel()
		_ = c.Done()
		return ports.CallResult{Content: r.Arguments}, nil
	}
	req := ports.CallRequest{Name: "echo", Arguments: json.RawMessage(`{"x":1}`)}
	ctx := context.Background()
	sess, err := portstest.NewConnector(sc).Connect(ctx, ports.Target{ServerID: serverID}, ports.Signals{})
	require.NoError(t, err)
	defer sess.Close()
	s := New(portstest.NewConnector(sc), ports.Target{ServerID: serverID, Kind: ports.TransportHTTP}, nil)
	defer s.Close()
	require.NoError(t, s.Connect(ctx))
	direct := testing.AllocsPerRun(200, func() { _, _ = sess.Call(ctx, req) })
	supervised := testing.AllocsPerRun(200, func() { _, _ = s.Call(ctx, req) })
	t.Logf("session %.1f, through the supervisor %.1f allocations per call", direct, supervised)
	assert.LessOrEqual(t, supervised-direct, 6.0)
}
