package composition

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/secret"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// TestGatewayForwardsServerLogs: an upstream go-sdk server logs from a
// tool, at every level, the token it was sent; through
// ConnectOptions.OnServerLog and Gateway.ServerLog the messages reach a
// downstream go-sdk client as the gateway's own notifications/message, at
// the level that client set (warning), masked: the token never reaches
// it. The Host has no Logger: the hook alone asks the server for its
// messages. The logger field is the server's name, or, for a Gateway of
// that one server, the server's own logger.
func TestGatewayForwardsServerLogs(t *testing.T) {
	const token = "tok-Canary-gw-5521"
	srv := mcp.NewServer(&mcp.Implementation{Name: "logger", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "log", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			auth := req.Extra.Header.Get("Authorization")
			for _, l := range []mcp.LoggingLevel{"debug", "info", "warning", "error"} {
				_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: l, Logger: "auth", Data: string(l) + ": got " + auth})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()

	for _, tc := range []struct{ only, logger string }{{"", "logger"}, {"logger", "auth"}} {
		t.Run("only="+tc.only, func(t *testing.T) {
			host, err := New(Ports{Approvals: portstest.NewApprovalStore(), Audit: portstest.NewAuditLog()}, Config{
				Lookup: func(k string) (string, bool) { return token, k == "LOG_TOKEN" },
			})
			require.NoError(t, err)
			srcs := []definition.Source{{Tier: ports.TierUser, Origin: "u", Data: []byte(`{"mcpServers": {"logger": {"type": "http", "url": "` +
				ts.URL + `/mcp", "headers": {"Authorization": "Bearer ${LOG_TOKEN}"}}}}`)}}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var gwp atomic.Pointer[Gateway]
			f := host.Connect(ctx, srcs, &ConnectOptions{OnServerLog: func(r ServerLog) {
				if g := gwp.Load(); g != nil {
					g.ServerLog(r)
				}
			}})
			defer f.Close()
			require.Equal(t, StateConnected, result(t, f, "logger").State)
			g := f.Gateway(&GatewayOptions{Server: tc.only})
			defer g.Close()
			gwp.Store(g)

			cin, sout := io.Pipe()
			sin, cout := io.Pipe()
			sctx, stop := context.WithCancel(ctx)
			served := make(chan error, 1)
			go func() { served <- g.ServeStdio(sctx, sin, sout) }()
			defer func() { stop(); _ = cout.Close(); <-served }()
			got := make(chan *mcp.LoggingMessageParams, 16)
			c := mcp.NewClient(&mcp.Implementation{Name: "down", Version: "0"}, &mcp.ClientOptions{
				LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) { got <- r.Params }})
			cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: cin, Writer: cout}, nil)
			require.NoError(t, err)
			defer cs.Close()
			require.NoError(t, cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}))

			_, err = f.CallServerTool(ctx, "logger", "log", json.RawMessage(`{}`))
			require.NoError(t, err)
			for _, want := range []string{"warning", "error"} {
				select {
				case p := <-got:
					assert.Equal(t, mcp.LoggingLevel(want), p.Level)
					assert.Equal(t, tc.logger, p.Logger)
					assert.Equal(t, want+": got "+secret.Redacted, p.Data, "masked")
				case <-ctx.Done():
					require.FailNow(t, "the server's log message did not reach the client", want)
				}
			}
		})
	}
}

// TestOnServerLogGetsTheMaskedRecord: the hook gets the very text and
// logger the Logger record holds (masked once: the definition's secret and
// a credential shape never reach it; control characters replaced), and
// with the hook set a Host without a Logger still forwards.
func TestOnServerLogGetsTheMaskedRecord(t *testing.T) {
	const secretValue = "tok-Canary-hook-7730"
	ghp := "ghp_" + strings.Repeat("Z9y8", 9)
	def := definition.Decode(definition.Source{Tier: ports.TierUser, Origin: "u", Data: []byte(
		`{"mcpServers": {"s": {"command": "s", "env": {"API_TOKEN": "${API_TOKEN}"}}}}`)})
	s, _ := definition.Resolve([]definition.Document{def}).Server("s")
	m, err := definition.Materialize(s.Def, func(string) (string, bool) { return secretValue, true })
	require.NoError(t, err)

	var got []ServerLog
	h := &Host{} // no Logger
	l := h.fleetLogs(func(r ServerLog) { got = append(got, r) })
	require.NotNil(t, l, "the hook alone makes a forwarder")
	l.connector(nil, "s", m)
	l.forward("s", ports.LogMessage{Level: ports.LogDebug, Logger: "db " + secretValue,
		Text: "auth with " + secretValue + " and " + ghp + "\x1b[2J done"})
	require.Len(t, got, 1)
	r := got[0]
	assert.Equal(t, "s", r.Server)
	assert.Equal(t, ports.LogDebug, r.Level, "every level is forwarded to the hook")
	for _, v := range []string{r.Logger, r.Text} {
		assert.NotContains(t, v, secretValue)
		assert.NotContains(t, v, ghp)
		assert.NotContains(t, v, "\x1b")
	}
	assert.Equal(t, "db "+secret.Redacted, r.Logger)
	assert.True(t, strings.HasPrefix(r.Text, "auth with "+secret.Redacted), r.Text)
}
