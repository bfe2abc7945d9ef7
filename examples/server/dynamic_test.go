package main

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toolList returns the names of the tools cs lists.
func toolList(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func TestDynamicTools(t *testing.T) {
	changed := make(chan struct{}, 16)
	c := mcp.NewClient(&mcp.Implementation{Name: "example-test", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cmd := exec.Command(binary, "-dynamic")
	cmd.Env = []string{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	await := func() {
		t.Helper()
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatal("no tools/list_changed")
		}
	}

	assert.Subset(t, toolList(t, cs), []string{"echo", "tool_add", "tool_remove"})
	assert.Equal(t, "added extra", text(t, call(t, cs, "tool_add", map[string]any{"name": "extra", "field": "a"})))
	await()
	assert.Contains(t, toolList(t, cs), "extra")
	assert.Equal(t, "hi", text(t, call(t, cs, "extra", map[string]any{"a": "hi"})))

	call(t, cs, "tool_add", map[string]any{"name": "extra", "field": "b"})
	await()
	res, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	i := slices.IndexFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == "extra" })
	require.GreaterOrEqual(t, i, 0)
	schema, ok := res.Tools[i].InputSchema.(map[string]any)
	require.True(t, ok)
	props, ok := schema["properties"].(map[string]any)
	require.True(t, ok)
	assert.Contains(t, props, "b", "the replaced tool's schema")
	assert.NotContains(t, props, "a")
	assert.Equal(t, "there", text(t, call(t, cs, "extra", map[string]any{"b": "there"})))

	assert.Equal(t, "removed extra", text(t, call(t, cs, "tool_remove", map[string]any{"name": "extra"})))
	await()
	assert.NotContains(t, toolList(t, cs), "extra")

	bad, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "tool_add", Arguments: map[string]any{"name": "a b", "field": "x"}})
	require.NoError(t, err)
	assert.True(t, bad.IsError, "a name with a space is refused")
}

func TestWithoutDynamicNoToolAdd(t *testing.T) {
	cs := stdioChild(t, "2025-11-25")
	assert.NotContains(t, toolList(t, cs), "tool_add")
}
