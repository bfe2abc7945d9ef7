package mcpsession

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

func waitSignal(t testing.TB, r *signalRecorder, want ports.ListKind) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case k := <-r.ch:
			if k == want {
				return
			}
		case <-deadline:
			t.Fatalf("no %s signal (seen %v)", want, r.seen())
		}
	}
}

// TestSignalsFromSDKServer: a go-sdk server's list changes reach Signals,
// over each transport (over HTTP through the standalone SSE stream).
func TestSignalsFromSDKServer(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			srv := newSDKServer(nil)
			rec := newSignalRecorder()
			s := connect(t, New(tc.dial(t, srv), nil), rec.signals())
			// Let the HTTP client's standalone stream come up.
			_, err := s.List(context.Background(), ports.ListTools, "")
			require.NoError(t, err)
			time.Sleep(50 * time.Millisecond)

			srv.AddTool(&mcp.Tool{Name: "new", InputSchema: objSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
			waitSignal(t, rec, ports.ListTools)

			srv.AddPrompt(&mcp.Prompt{Name: "p2"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{}, nil
			})
			waitSignal(t, rec, ports.ListPrompts)

			srv.AddResource(&mcp.Resource{URI: "file:///b", Name: "b"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{}, nil
			})
			waitSignal(t, rec, ports.ListResources)
			waitSignal(t, rec, ports.ListResourceTemplates)

			p, err := s.List(context.Background(), ports.ListTools, "")
			require.NoError(t, err)
			var names []string
			for _, tool := range p.Tools {
				names = append(names, tool.Name)
			}
			assert.Contains(t, names, "new")
		})
	}
}

// TestSignalsOnly: every notification other than a list change of a
// declared kind is ignored; server-to-client requests are refused by the
// SDK because nothing is advertised; the session stays usable.
func TestSignalsOnly(t *testing.T) {
	p := &memPeer{
		version: "2025-11-25",
		caps:    map[string]any{"tools": map[string]any{"listChanged": true}, "logging": map[string]any{}},
		handle: func(string, json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
			return json.RawMessage(`{"tools":[]}`), nil
		},
	}
	rec := newSignalRecorder()
	s := connect(t, New(fixedDialer(startMemPeer(t, p)), nil), rec.signals())

	for _, m := range []string{
		"notifications/prompts/list_changed",   // prompts not declared
		"notifications/resources/list_changed", // resources not declared
		"notifications/message",
		"notifications/progress",
		"notifications/resources/updated",
		"notifications/claude/channel",
		"notifications/elicitation/complete",
	} {
		p.notify(t, m)
	}
	p.notify(t, "notifications/tools/list_changed")
	waitSignal(t, rec, ports.ListTools)
	time.Sleep(50 * time.Millisecond)
	assert.Equal(t, []ports.ListKind{ports.ListTools}, rec.seen(), "only the declared kind's list change signals")

	for i, m := range []string{"roots/list", "sampling/createMessage", "elicitation/create"} {
		id, err := jsonrpc.MakeID(float64(100 + i))
		require.NoError(t, err)
		require.NoError(t, p.conn.Write(context.Background(), &jsonrpc.Request{ID: id, Method: m, Params: json.RawMessage(`{}`)}))
		select {
		case resp := <-p.responses:
			assert.Error(t, resp.Error, "%s is refused", m)
			assert.Nil(t, resp.Result)
		case <-time.After(5 * time.Second):
			t.Fatalf("no reply to %s", m)
		}
	}

	_, err := s.List(context.Background(), ports.ListTools, "")
	require.NoError(t, err, "the session is still usable")

	// A notification racing with Close is not signalled.
	require.NoError(t, s.Close())
	before := len(rec.seen())
	s.(*session).signal(ports.ListTools)
	assert.Len(t, rec.seen(), before, "nothing is signalled after Close")
}

// TestSignalsNil: a nil ListChanged is allowed.
func TestSignalsNil(t *testing.T) {
	p := &memPeer{version: "2025-11-25"}
	s := connect(t, New(fixedDialer(startMemPeer(t, p)), nil), ports.Signals{})
	p.notify(t, "notifications/tools/list_changed")
	_, err := s.List(context.Background(), ports.ListPrompts, "")
	require.Error(t, err)
}
