package mcpsession

import (
	"context"
	"encoding/json"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

func TestInboundGate(t *testing.T) {
	now := time.Unix(0, 0)
	g := newInboundGate()
	g.now = func() time.Time { return now }

	for _, m := range []string{"notifications/message", "notifications/cancelled", "x/unknown", ""} {
		assert.False(t, g.admit(m, false), "%s is ignored, so dropped", m)
	}
	const lc = "notifications/tools/list_changed"
	require.True(t, g.admit(lc, false))
	assert.False(t, g.admit(lc, false), "coalesced while the first waits")
	assert.True(t, g.admit("notifications/prompts/list_changed", false), "each method on its own")
	for range maxPendingCalls {
		assert.True(t, g.admit("ping", true), "requests of one method wait up to a bound, so each is answered")
	}
	assert.False(t, g.admit("ping", true), "beyond the bound a request is dropped")
	g.handled("ping")
	assert.True(t, g.admit("ping", true), "a handled request frees its place")
	g.handled(lc)
	assert.True(t, g.admit(lc, false), "admitted again once handled")
	now = now.Add(gateStale - time.Nanosecond)
	assert.False(t, g.admit(lc, false))
	now = now.Add(time.Nanosecond)
	assert.True(t, g.admit(lc, false), "a message the SDK dropped unhandled stops blocking its method")
}

// filteringTransport is a transport that supports Conn.InboundFilter, as
// the stdio and HTTP transport adapters do.
type filteringTransport struct {
	inner mcp.Transport
	admit atomic.Pointer[func(string, bool) bool]
}

func (f *filteringTransport) set(admit func(string, bool) bool) { f.admit.Store(&admit) }

func (f *filteringTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := f.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &filteringConn{Connection: c, f: f}, nil
}

type filteringConn struct {
	mcp.Connection
	f *filteringTransport
}

func (c *filteringConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		m, err := c.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		if r, ok := m.(*jsonrpc.Request); ok {
			if a := c.f.admit.Load(); a != nil && !(*a)(r.Method, r.IsCall()) {
				continue
			}
		}
		return m, nil
	}
}

// TestNotificationFloodIsCoalesced: while the host's ListChanged callback
// is blocked (so the SDK's handler cannot move), a server sends a flood of
// list changes and logging notifications. Over a transport with an inbound
// filter the SDK queues almost none of them: memory does not grow with the
// flood, the host gets a handful of signals (the last of them after the
// flood, so it re-lists what changed), and the session goes on. Without
// the filter, the SDK would have queued every one of them.
func TestNotificationFloodIsCoalesced(t *testing.T) {
	const flood = 20_000
	frozen := time.Now()
	gateClock = func() time.Time { return frozen } // nothing goes stale
	defer func() { gateClock = time.Now }()
	for _, filtered := range []bool{true, false} {
		name := "filtered"
		if !filtered {
			name = "unfiltered"
		}
		t.Run(name, func(t *testing.T) {
			p := &memPeer{version: "2025-11-25", caps: map[string]any{"tools": map[string]any{"listChanged": true}, "logging": map[string]any{}},
				handle: func(string, json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
					return json.RawMessage(`{"tools":[]}`), nil
				}}
			conn := startMemPeer(t, p)
			ft := &filteringTransport{inner: conn.Transport}
			conn.Transport = ft
			if filtered {
				conn.InboundFilter = ft.set
			}
			release := make(chan struct{})
			var once sync.Once
			var signals atomic.Int64
			s := connect(t, New(fixedDialer(conn), nil), ports.Signals{ListChanged: func(ports.ListKind) {
				signals.Add(1)
				<-release // the first signal holds the SDK's handler
			}})
			defer once.Do(func() { close(release) })

			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			params := json.RawMessage(`{"level":"info","data":"a line of server logging, as servers write them"}`)
			for range flood {
				require.NoError(t, p.conn.Write(context.Background(), &jsonrpc.Request{Method: "notifications/tools/list_changed"}))
				require.NoError(t, p.conn.Write(context.Background(), &jsonrpc.Request{Method: "notifications/message", Params: params}))
			}
			// Every message was read (the pipe is unbuffered): the ones let
			// through now wait behind the blocked handler.
			runtime.GC()
			runtime.ReadMemStats(&after)
			grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			t.Logf("heap grew by %d KiB while %d notifications arrived", grown>>10, 2*flood)
			if !filtered {
				assert.Greater(t, grown, int64(6<<20), "the SDK queues what reaches it")
				once.Do(func() { close(release) })
				return
			}
			assert.Less(t, grown, int64(2<<20), "the flood is not queued")
			once.Do(func() { close(release) })
			assert.Eventually(t, func() bool { return signals.Load() >= 2 }, 10*time.Second, time.Millisecond,
				"the list change let through behind the first is signalled")
			_, err := s.List(context.Background(), ports.ListTools, "")
			require.NoError(t, err, "the session goes on")
			assert.EqualValues(t, 2, signals.Load(), "the one that held the handler, and the one let through behind it")
		})
	}
}
