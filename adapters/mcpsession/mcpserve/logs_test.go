package mcpserve

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// TestLogReachesClientsAtTheirLevel: the server declares logging; a log
// message reaches each client that set a level at or below its level (in
// the order Log was called, with its logger and text), not a client that
// set a higher one; a level MCP does not define goes out as "info".
func TestLogReachesClientsAtTheirLevel(t *testing.T) {
	s := New(newFake(Catalog{}), nil)
	t.Cleanup(s.Close)
	type client struct {
		cs  *mcp.ClientSession
		got chan *mcp.LoggingMessageParams
	}
	newClient := func(level mcp.LoggingLevel) client {
		got := make(chan *mcp.LoggingMessageParams, 16)
		cs := connect(t, s, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			got <- r.Params
		}})
		require.NotNil(t, cs.InitializeResult().Capabilities.Logging, "the logging capability is declared")
		require.NoError(t, cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: level}))
		return client{cs, got}
	}
	debug, warn := newClient("debug"), newClient("warning")

	s.Log(LogMessage{Level: ports.LogInfo, Logger: "weather", Text: "first"})
	s.Log(LogMessage{Level: "shouting", Logger: "weather", Text: "odd level"})
	s.Log(LogMessage{Level: ports.LogError, Logger: "weather", Text: "boom"})

	next := func(c client) *mcp.LoggingMessageParams {
		select {
		case p := <-c.got:
			return p
		case <-time.After(10 * time.Second):
			require.FailNow(t, "no log message reached the client")
			return nil
		}
	}
	for _, want := range []struct{ level, text string }{{"info", "first"}, {"info", "odd level"}, {"error", "boom"}} {
		p := next(debug)
		assert.Equal(t, mcp.LoggingLevel(want.level), p.Level)
		assert.Equal(t, "weather", p.Logger)
		assert.Equal(t, want.text, p.Data)
	}
	p := next(warn) // the info messages were filtered out for it: the error comes first
	assert.Equal(t, mcp.LoggingLevel("error"), p.Level)
	assert.Equal(t, "boom", p.Data)
	assert.Zero(t, s.LogsDropped())
}

// TestLogAfterCloseIsDropped: Log after Close neither blocks nor panics.
func TestLogAfterCloseIsDropped(t *testing.T) {
	s := New(newFake(Catalog{}), nil)
	s.Close()
	for range MaxLogQueue + 2 {
		s.Log(LogMessage{Level: ports.LogInfo, Text: "late"})
	}
	s.Close()
}
