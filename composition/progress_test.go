package composition

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// TestCallProgressTokenOnlyWhenAsked: what a go-sdk server over
// Streamable HTTP receives of Fleet.CallServerTool and Fleet.CallHostTool with the
// default call timeouts: a progress token in _meta only when the call's
// ctx comes from ports.WithProgress.
func TestCallProgressTokenOnlyWhenAsked(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "tokens", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "token", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := req.Params.GetProgressToken()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(tok != nil)}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()

	host, err := New(Ports{Approvals: portstest.NewApprovalStore(), Audit: portstest.NewAuditLog()}, Config{})
	require.NoError(t, err)
	srcs := []definition.Source{{Tier: ports.TierUser, Origin: "u", Data: []byte(`{"mcpServers": {"s": {"type": "http", "url": "` + ts.URL + `/mcp"}}}`)}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := host.Connect(ctx, srcs, nil)
	defer f.Close()
	require.Equal(t, StateConnected, result(t, f, "s").State)

	asked := ports.WithProgress(ctx, func(ports.Progress) {})
	for _, tt := range []struct {
		name string
		call func(context.Context) (ports.ToolResult, error)
	}{
		{"Call", func(ctx context.Context) (ports.ToolResult, error) { return f.CallServerTool(ctx, "s", "token", nil) }},
		{"CallTool", func(ctx context.Context) (ports.ToolResult, error) {
			return f.CallHostTool(ctx, catalog.ToolName("s", "token"), nil)
		}},
	} {
		for _, c := range []struct {
			ctx  context.Context
			want string
		}{{ctx, "false"}, {asked, "true"}} {
			res, err := tt.call(c.ctx)
			require.NoError(t, err, tt.name)
			assert.JSONEq(t, `[{"type":"text","text":"`+c.want+`"}]`, string(res.Content), "%s: a progress token was sent", tt.name)
		}
	}
}
