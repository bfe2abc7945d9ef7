// Command client-gosdk is the raw go-sdk client of the peer benchmark: the
// official SDK's mcp.Client pinned to the protocol version of the era the
// harness asks for (-era: 2025-11-25, or 2026-07-28 with server/discover),
// asking for list changes as a host does, the baseline every other client
// kind of that era is a ratio of.
package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/bench/internal/clientkit"
	"github.com/mcpward/mcpward/bench/internal/fixture"
)

func main() {
	// It asks for list changes as a host does (and as mcpward does): in
	// the modern era that opens a subscriptions/listen stream at connect.
	clientkit.Main("go-sdk", driver{mcp.NewClient(&mcp.Implementation{Name: "bench-gosdk", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) {},
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) {},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {},
	})})
}

type driver struct{ client *mcp.Client }

type conn struct {
	cs    *mcp.ClientSession
	tr    *http.Transport
	tools []*mcp.Tool
}

func (d driver) Connect(ctx context.Context, t clientkit.Target) (clientkit.Conn, error) {
	var tr mcp.Transport
	c := &conn{}
	if t.Transport == "http" {
		c.tr = &http.Transport{}
		tr = &mcp.StreamableClientTransport{Endpoint: t.URL, HTTPClient: &http.Client{Transport: c.tr}, MaxRetries: -1}
	} else {
		tr = &mcp.CommandTransport{Command: exec.Command(t.Command, t.Args...)}
	}
	cs, err := d.client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: fixture.Version(t.Era)})
	if err != nil {
		return nil, err
	}
	c.cs = cs
	cursor := ""
	for {
		res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			_ = c.Close()
			return nil, err
		}
		c.tools = append(c.tools, res.Tools...)
		if res.NextCursor == "" {
			return c, nil
		}
		cursor = res.NextCursor
	}
}

func (d driver) ConnectMany(ctx context.Context, ts []clientkit.Target) (io.Closer, error) {
	return clientkit.ConnectEach(ctx, d, ts)
}

func (c *conn) Tools() int { return len(c.tools) }

func (c *conn) Call(ctx context.Context) error {
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: fixture.Echo, Arguments: fixture.EchoArgs})
	if err != nil {
		return err
	}
	if res.IsError {
		return errors.New("echo returned an error result")
	}
	return nil
}

func (c *conn) Close() error {
	err := c.cs.Close()
	if c.tr != nil {
		c.tr.CloseIdleConnections()
	}
	return err
}
