package portstest_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

func TestTool(t *testing.T) {
	ctx := t.Context()
	schema := json.RawMessage(`{"type":"object"}`)
	spec := ports.ToolSpec{Name: "srv__echo", Description: "echo", InputSchema: schema}
	tool := portstest.NewTool(spec, func(_ context.Context, args json.RawMessage) (ports.ToolResult, error) {
		return ports.ToolResult{Content: args, Truncated: true}, nil
	})
	schema[2] = 'X'
	got := tool.Spec()
	assert.Equal(t, "srv__echo", got.Name)
	assert.JSONEq(t, `{"type":"object"}`, string(got.InputSchema), "NewTool keeps a copy")
	got.InputSchema[2] = 'Y'
	assert.JSONEq(t, `{"type":"object"}`, string(tool.Spec().InputSchema), "Spec returns a copy")

	args := json.RawMessage(`{"a":1}`)
	res, err := tool.Call(ctx, args)
	require.NoError(t, err)
	assert.Equal(t, ports.ToolResult{Content: json.RawMessage(`{"a":1}`), Truncated: true}, res)
	args[2] = 'b'
	assert.Equal(t, []json.RawMessage{json.RawMessage(`{"a":1}`)}, tool.Args(), "recorded args are copies")

	tool.FailOnce("Call", errBoom)
	_, err = tool.Call(ctx, json.RawMessage(`{}`))
	require.ErrorIs(t, err, errBoom)
	assert.Len(t, tool.Args(), 1, "a failed call is not recorded")
	assert.Equal(t, 2, tool.Calls("Call"))

	bare := portstest.NewTool(ports.ToolSpec{Name: "x"}, nil)
	res, err = bare.Call(ctx, nil)
	require.NoError(t, err)
	assert.Zero(t, res)
}

func TestToolSpecTypedPartsAreCopies(t *testing.T) {
	yes := true
	out := json.RawMessage(`{"type":"object"}`)
	spec := ports.ToolSpec{Name: "x", Title: "X", OutputSchema: out, Annotations: &ports.ToolAnnotations{Title: "A", ReadOnlyHint: &yes}}
	tool := portstest.NewTool(spec, func(context.Context, json.RawMessage) (ports.ToolResult, error) {
		return ports.ToolResult{Blocks: []ports.ContentBlock{{Kind: ports.ContentImage, MIMEType: "image/png", Data: []byte{1}}},
			StructuredContent: json.RawMessage(`{"a":1}`)}, nil
	})
	out[2] = 'X'
	spec.Annotations.Title = "changed"
	yes = false
	got := tool.Spec()
	assert.Equal(t, "X", got.Title)
	assert.JSONEq(t, `{"type":"object"}`, string(got.OutputSchema), "NewTool keeps a copy")
	require.NotNil(t, got.Annotations)
	assert.Equal(t, "A", got.Annotations.Title)
	assert.True(t, *got.Annotations.ReadOnlyHint)
	*got.Annotations.ReadOnlyHint = false
	got.OutputSchema[2] = 'Y'
	again := tool.Spec()
	assert.True(t, *again.Annotations.ReadOnlyHint, "Spec returns a copy")
	assert.JSONEq(t, `{"type":"object"}`, string(again.OutputSchema))

	res, err := tool.Call(t.Context(), nil)
	require.NoError(t, err)
	assert.Equal(t, ports.ContentImage, res.Blocks[0].Kind)
	assert.JSONEq(t, `{"a":1}`, string(res.StructuredContent))
}
