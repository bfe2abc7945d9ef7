package composition

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDialHTTPSharesAnOriginsConnections: two servers of one Host on the
// same origin share its admitted connections: once the first server's
// session is up, the second's requests go over the connection the first
// one's dial made, and only its standalone GET stream (which holds a
// connection for as long as the session lives) dials. Each Dial still
// runs its own admission and authentication decision, and releasing one
// server's Conn leaves the other's session working.
func TestDialHTTPSharesAnOriginsConnections(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "peer", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	// JSON answers: the transport reads each in full before the SDK sees
	// it, so a POST's connection is idle again when the call returns (an
	// SSE answer's drain would make the count depend on timing).
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	var gets atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)

	r := newRig(t, Config{})
	srcs := userSrc(`{"mcpServers": {
		"a": {"type": "http", "url": "` + ts.URL + `/a/mcp"},
		"b": {"type": "http", "url": "` + ts.URL + `/b/mcp"}}}`)
	streams := func(n int64) {
		require.Eventually(t, func() bool { return gets.Load() == n }, 10*time.Second, 5*time.Millisecond, "standalone GET streams")
	}

	_, ta := r.evalTarget(t, srcs, "a")
	ca, err := r.host.Dialer().Dial(context.Background(), ta)
	require.NoError(t, err)
	sa := session(t, ca)
	assert.Equal(t, "one", echo(t, sa, "one"))
	streams(1)
	afterA := r.dials.n.Load()
	require.Equal(t, int64(2), afterA, "a: one connection for its POSTs, one for its GET stream")

	_, tb := r.evalTarget(t, srcs, "b")
	cb, err := r.host.Dialer().Dial(context.Background(), tb)
	require.NoError(t, err)
	sb := session(t, cb)
	assert.Equal(t, "two", echo(t, sb, "two"))
	streams(2)
	assert.Equal(t, afterA+1, r.dials.n.Load(), "b's POSTs went over a's idle connection; only its GET stream dialled")

	// a's session ends and its Conn is released: b's keeps working.
	require.NoError(t, sa.Close())
	ca.Release()
	assert.Equal(t, "three", echo(t, sb, "three"))
}
