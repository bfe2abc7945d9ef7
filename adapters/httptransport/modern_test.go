package httptransport

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/egress"
	"github.com/mcpward/mcpward/ports/portstest"
)

// TestModernEraThroughTransport: a go-sdk client of protocol 2026-07-28
// through the admitted transport, against a stateless go-sdk server: the
// SDK's own MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-*
// headers reach the server unchanged beside the static and authenticator
// headers (the server checks the Mcp-Param-* ones against the body), while
// a definition's or authenticator's Mcp-* header stays refused
// (TestStaticHeadersChecked, TestAuthenticatorHeaders).
func TestModernEraThroughTransport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := mcp.NewServer(&mcp.Implementation{Name: "modern", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "route", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	srv := newTestServer(t, false, mcpHandler(s, &mcp.StreamableHTTPOptions{Stateless: true}))
	auth := portstest.NewAuthenticator(http.Header{"Authorization": {"Bearer auth-token"}}, 1)
	tr, err := New(egress.Default(), safeOptions()).Transport(ctx, httpTarget("srv", srv.URL+"/mcp", map[string]string{"X-Static": "v"}), auth)
	require.NoError(t, err)
	closeIdle(t, tr)

	c := mcp.NewClient(&mcp.Implementation{Name: "mcpward-test", Version: "0"}, &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	cs, err := c.Connect(ctx, tr, nil)
	require.NoError(t, err)
	defer cs.Close()
	require.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)
	lt, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	require.Len(t, lt.Tools, 1)
	// The SDK's client hands its own transport the listed tool through a
	// context key of its own; ours gets it through WithTool (mcpsession's
	// Conn.WithTool hook).
	res, err := cs.CallTool(WithTool(ctx, lt.Tools[0]), &mcp.CallToolParams{Name: "route", Arguments: map[string]any{"region": "us-west1"}})
	require.NoError(t, err, "the server found the Mcp-Param-Region header it checks")
	require.False(t, res.IsError)

	var sawCall bool
	for _, r := range srv.requests() {
		assert.Equal(t, "2026-07-28", r.Header.Get("Mcp-Protocol-Version"))
		assert.NotEmpty(t, r.Header.Get("Mcp-Method"))
		assert.Empty(t, r.Header.Get("Mcp-Session-Id"), "no protocol session in the modern era")
		assert.Equal(t, "v", r.Header.Get("X-Static"))
		assert.Equal(t, "Bearer auth-token", r.Header.Get("Authorization"))
		if r.Header.Get("Mcp-Method") == "tools/call" {
			sawCall = true
			assert.Equal(t, "route", r.Header.Get("Mcp-Name"))
			assert.Equal(t, "us-west1", r.Header.Get("Mcp-Param-Region"))
		}
	}
	assert.True(t, sawCall)
}
