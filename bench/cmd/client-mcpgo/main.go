// Command client-mcpgo is the github.com/mark3labs/mcp-go client of the
// peer benchmark, pinned to protocol 2025-11-25: it is measured in the
// legacy era only (it refuses -era modern; the harness does not ask). It
// is here for comparison only: no mcpward module links mcp-go.
package main

import (
	"context"
	"errors"
	"io"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpward/mcpward/bench/internal/clientkit"
	"github.com/mcpward/mcpward/bench/internal/fixture"
)

func main() { clientkit.Main("mcp-go", driver{}) }

type driver struct{}

type conn struct {
	c     *client.Client
	tools []mcp.Tool
}

func (d driver) Connect(ctx context.Context, t clientkit.Target) (clientkit.Conn, error) {
	var tr transport.Interface
	if t.Era == "modern" {
		return nil, errors.New("mcp-go is measured in the legacy era only")
	}
	if t.Transport == "http" {
		h, err := transport.NewStreamableHTTP(t.URL)
		if err != nil {
			return nil, err
		}
		tr = h
	} else {
		tr = transport.NewStdio(t.Command, nil, t.Args...)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(fixture.ProtocolVersion))
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = fixture.ProtocolVersion
	req.Params.ClientInfo = mcp.Implementation{Name: "bench-mcpgo", Version: "1"}
	if _, err := c.Initialize(ctx, req); err != nil {
		_ = c.Close()
		return nil, err
	}
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	return &conn{c: c, tools: res.Tools}, nil
}

func (d driver) ConnectMany(ctx context.Context, ts []clientkit.Target) (io.Closer, error) {
	return clientkit.ConnectEach(ctx, d, ts)
}

func (c *conn) Tools() int { return len(c.tools) }

func (c *conn) Call(ctx context.Context) error {
	req := mcp.CallToolRequest{}
	req.Params.Name = fixture.Echo
	req.Params.Arguments = fixture.EchoArgs
	res, err := c.c.CallTool(ctx, req)
	if err != nil {
		return err
	}
	if res.IsError {
		return errors.New("echo returned an error result")
	}
	return nil
}

func (c *conn) Close() error { return c.c.Close() }
