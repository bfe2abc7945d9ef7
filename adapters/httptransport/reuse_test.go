package httptransport

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/egress"
)

// TestSSEAnswersReuseConnections pins connection reuse for calls answered
// as SSE streams, each call under a context that ends when it returns (as
// the supervisor's call timeout does): the SDK drains a stream after the
// answer it waited for, and that drain must not be cut by the call's end,
// or every call costs a new TCP connection.
func TestSSEAnswersReuseConnections(t *testing.T) {
	for _, filtered := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "filtered"}[filtered]
		t.Run(name, func(t *testing.T) {
			srv := newTestServer(t, false, mcpHandler(newMCPServer(), nil))
			tr, err := New(egress.Default(), safeOptions()).Transport(context.Background(), httpTarget("s", srv.URL+"/mcp", nil), nil)
			require.NoError(t, err)
			closeIdle(t, tr)
			if filtered {
				require.True(t, SetInboundFilter(tr, func(string, bool) bool { return true }))
			}
			cs, err := connect(context.Background(), tr)
			require.NoError(t, err)
			defer cs.Close()
			before := srv.accepts()
			const calls = 40
			for range calls {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"msg": "hi"}})
				cancel()
				require.NoError(t, err)
				require.False(t, res.IsError)
			}
			// Sequential calls need one connection (two when the standalone
			// stream's connection and a call's overlap at the start).
			require.LessOrEqual(t, srv.accepts()-before, int64(2), "new connections for %d sequential calls", calls)
		})
	}
}
