package mcpsession

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

func TestToolAnnotationsConversion(t *testing.T) {
	no, yes := false, true
	assert.Nil(t, toolAnnotations(nil))
	assert.Equal(t, &ports.ToolAnnotations{}, toolAnnotations(&mcp.ToolAnnotations{}),
		"false readOnly/idempotent hints look absent, as their default is false")
	got := toolAnnotations(&mcp.ToolAnnotations{Title: "T", ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: &no, OpenWorldHint: &yes})
	assert.Equal(t, &ports.ToolAnnotations{Title: "T", ReadOnlyHint: &yes, IdempotentHint: &yes, DestructiveHint: &no, OpenWorldHint: &yes}, got)
}

// TestEverythingTypedResults: against the real third-party server, the
// typed values (structured output checked against its output schema,
// images, content annotations, resource links, embedded resources, tool
// titles and annotation hints) reach ports.ToolSpec and ports.ToolResult
// through mcpsession and core/catalog.
func TestEverythingTypedResults(t *testing.T) {
	for _, tt := range []struct {
		name string
		dial func(t *testing.T) Dialer
	}{{"stdio", everythingStdio}, {"streamable http", everythingHTTP}} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			sess, err := New(tt.dial(t), nil).Connect(ctx, target("everything"), ports.Signals{})
			require.NoError(t, err)
			defer func() { assert.NoError(t, sess.Close()) }()
			lists, err := catalog.Discover(ctx, sess, nil)
			require.NoError(t, err)
			cat := catalog.Build("everything", sess.Identity(), lists, sess, nil)
			tool := func(name string) *catalog.Tool {
				tl, ok := cat.Tool(catalog.ToolName("everything", name))
				require.True(t, ok, "%s admitted", name)
				return tl
			}
			call := func(name, args string) ports.ToolResult {
				res, err := tool(name).Call(ctx, json.RawMessage(args))
				require.NoError(t, err, name)
				require.False(t, res.IsError, name)
				return res
			}
			yes, no := true, false

			// Title, annotation hints and the output schema.
			sc := tool("get-structured-content")
			spec := sc.Spec()
			assert.Equal(t, "Get Structured Content Tool", spec.Title)
			assert.Equal(t, &ports.ToolAnnotations{ReadOnlyHint: &yes, DestructiveHint: &no, IdempotentHint: &yes, OpenWorldHint: &no}, spec.Annotations)
			require.NotNil(t, spec.OutputSchema)
			var out struct {
				Type       string
				Properties map[string]map[string]any
				Required   []string
			}
			require.NoError(t, json.Unmarshal(spec.OutputSchema, &out))
			assert.Equal(t, "object", out.Type)
			assert.Equal(t, "number", out.Properties["temperature"]["type"])
			assert.ElementsMatch(t, []string{"temperature", "conditions", "humidity"}, out.Required)

			// Structured output, validated against that schema.
			res := call("get-structured-content", `{"location":"New York"}`)
			assert.JSONEq(t, `{"temperature":33,"conditions":"Cloudy","humidity":82}`, string(res.StructuredContent))
			require.Len(t, res.Blocks, 1)
			assert.Equal(t, ports.ContentText, res.Blocks[0].Kind)
			assert.JSONEq(t, `{"temperature":33,"conditions":"Cloudy","humidity":82}`, res.Blocks[0].Text)

			// An image between two texts, decoded.
			res = call("get-tiny-image", `{}`)
			require.Len(t, res.Blocks, 3)
			assert.Equal(t, ports.ContentText, res.Blocks[0].Kind)
			img := res.Blocks[1]
			assert.Equal(t, ports.ContentImage, img.Kind)
			assert.Equal(t, "image/png", img.MIMEType)
			assert.Equal(t, "\x89PNG\r\n\x1a\n", string(img.Data[:8]), "the PNG's own bytes")
			assert.Equal(t, "The image above is the MCP logo.", res.Blocks[2].Text)

			// Content annotations.
			res = call("get-annotated-message", `{"messageType":"error","includeImage":true}`)
			require.GreaterOrEqual(t, len(res.Blocks), 2)
			require.NotNil(t, res.Blocks[0].Annotations)
			assert.Equal(t, []string{"user", "assistant"}, res.Blocks[0].Annotations.Audience)
			require.NotNil(t, res.Blocks[0].Annotations.Priority)
			assert.InDelta(t, 1.0, *res.Blocks[0].Annotations.Priority, 0)
			assert.Equal(t, ports.ContentImage, res.Blocks[1].Kind)

			// Resource links.
			res = call("get-resource-links", `{"count":2}`)
			require.Len(t, res.Blocks, 3)
			for i, b := range res.Blocks[1:] {
				assert.Equal(t, ports.ContentResourceLink, b.Kind)
				assert.NotEmpty(t, b.URI)
				assert.NotEmpty(t, b.MIMEType)
				assert.Contains(t, b.Name, "Resource "+string(rune('1'+i)))
			}

			// Embedded resources, text and blob.
			res = call("get-resource-reference", `{"resourceType":"Text","resourceId":2}`)
			require.Len(t, res.Blocks, 3)
			assert.Equal(t, ports.ContentResource, res.Blocks[1].Kind)
			assert.NotEmpty(t, res.Blocks[1].URI)
			assert.NotEmpty(t, res.Blocks[1].Text)
			assert.Nil(t, res.Blocks[1].Data)
			res = call("get-resource-reference", `{"resourceType":"Blob","resourceId":1}`)
			require.Len(t, res.Blocks, 3)
			assert.Equal(t, ports.ContentResource, res.Blocks[1].Kind)
			assert.NotEmpty(t, res.Blocks[1].Data)

			// A result over the binary limit is refused by name, and the
			// server stays usable.
			small := catalog.Build("everything", sess.Identity(), lists, sess, &catalog.Options{MaxBinaryBytes: 64})
			tiny, ok := small.Tool(catalog.ToolName("everything", "get-tiny-image"))
			require.True(t, ok)
			_, err = tiny.Call(ctx, nil)
			assert.Equal(t, catalog.ReasonBinaryTooLarge, refusal.ReasonOf(err))
			call("echo", `{"message":"still usable"}`)
		})
	}
}

// TestHostileTypedResults: a server whose structured content does not
// match its own output schema, or whose image is over the binary limit,
// gets its result refused by name through the real session and catalog,
// and stays usable.
func TestHostileTypedResults(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "typed", Version: "1"}, nil)
	out := json.RawMessage(`{"type":"object","properties":{"t":{"type":"number"}},"required":["t"]}`)
	srv.AddTool(&mcp.Tool{Name: "weather", InputSchema: objSchema, OutputSchema: out},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hot"}},
				StructuredContent: map[string]any{"t": canary}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "bigimage", InputSchema: objSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 2<<10)}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "fine", InputSchema: objSchema, OutputSchema: out},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "21"}}, StructuredContent: map[string]any{"t": 21}}, nil
		})
	ctx := context.Background()
	sess := connect(t, New(memDialer(t, srv), nil), ports.Signals{})
	lists, err := catalog.Discover(ctx, sess, nil)
	require.NoError(t, err)
	cat := catalog.Build("typed", sess.Identity(), lists, sess, &catalog.Options{MaxBinaryBytes: 1 << 10})
	call := func(name string) (ports.ToolResult, error) {
		tool, ok := cat.Tool(catalog.ToolName("typed", name))
		require.True(t, ok, name)
		return tool.Call(ctx, nil)
	}

	_, err = call("weather")
	var se *catalog.StructuredContentError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, catalog.ReasonStructuredContentInvalid, refusal.ReasonOf(err))
	assert.Equal(t, "/t: expected number, got string", se.Explain())
	assertNoCanary(t, err)

	_, err = call("bigimage")
	assert.Equal(t, refusal.Protocol, refusal.ClassOf(err))
	assert.Equal(t, catalog.ReasonBinaryTooLarge, refusal.ReasonOf(err))

	res, err := call("fine")
	require.NoError(t, err, "the session stays usable")
	assert.JSONEq(t, `{"t":21}`, string(res.StructuredContent))
	assert.Equal(t, "21", res.Blocks[0].Text)
}
