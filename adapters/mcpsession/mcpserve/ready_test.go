package mcpserve

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// TestReady: with Options.Ready a list waits for it and then answers with
// the catalog as it is after it (registered again at once, whatever the
// follower does); a call of a tool offered now does not wait; a call,
// get or read of a name not offered waits, then finds the tool the
// catalog gained meanwhile. Without Ready nothing waits.
func TestReady(t *testing.T) {
	tool := func(name string) Tool { return Tool{Name: name, InputSchema: objSchema} }
	b := newFake(Catalog{Tools: []Tool{tool("a")}})
	b.call = func(_ context.Context, name string, _ json.RawMessage) (ports.ToolResult, error) {
		return ports.ToolResult{Content: json.RawMessage(`[{"type":"text","text":"` + name + `"}]`)}, nil
	}
	gate := make(chan struct{})
	var waits atomic.Int32
	s := New(b, &Options{Ready: func(ctx context.Context) {
		waits.Add(1)
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}})
	t.Cleanup(s.Close)
	cs := connect(t, s, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a"})
	require.NoError(t, err)
	assert.False(t, r.IsError)
	assert.Zero(t, waits.Load(), "a call of a tool offered now does not wait")

	listed := make(chan []string, 1)
	go func() {
		res, err := cs.ListTools(ctx, nil)
		var names []string
		if err == nil {
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
			}
		}
		listed <- names
	}()
	called := make(chan *mcp.CallToolResult, 1)
	go func() {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "b"})
		if err != nil {
			r = &mcp.CallToolResult{IsError: true}
		}
		called <- r
	}()
	require.Eventually(t, func() bool { return waits.Load() == 2 }, 5*time.Second, time.Millisecond)
	select {
	case <-listed:
		t.Fatal("the list answered before Ready returned")
	case <-called:
		t.Fatal("the call of a tool not offered answered before Ready returned")
	case <-time.After(100 * time.Millisecond):
	}
	b.mu.Lock() // the catalog grows without telling the follower
	b.cat = Catalog{Tools: []Tool{tool("a"), tool("b")}}
	b.mu.Unlock()
	close(gate)
	assert.ElementsMatch(t, []string{"a", "b"}, <-listed, "the list answers with the catalog after Ready")
	r = <-called
	require.False(t, r.IsError, "the call finds the tool the catalog gained")
	assert.Equal(t, "b", r.Content[0].(*mcp.TextContent).Text)

	// Once ready, a list still asks Ready (which returns at once).
	_, err = cs.ListTools(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, int32(3), waits.Load())

	// Prompts and resources not offered wait too, and fail as unknown.
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "nope"})
	assert.Error(t, err)
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://nope"})
	assert.Error(t, err)
	assert.Equal(t, int32(5), waits.Load())
}
