package mcpsession

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

func TestHeaderIn(t *testing.T) {
	for _, tc := range []struct {
		name string
		json string
		want bool
	}{
		{"none", `{"type":"object","properties":{"a":{"type":"string"}}}`, false},
		{"property", `{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}`, true},
		{"nested", `{"properties":{"o":{"properties":{"a":{"x-mcp-header":"A"}}}}}`, true},
		{"null value", `{"properties":{"a":{"x-mcp-header":null}}}`, true},
		{"beside a bad sibling", `{"properties":{"a":true,"b":{"x-mcp-header":"B"}}}`, true},
		{"at the root", `{"x-mcp-header":"A","properties":{}}`, false},
		{"under another keyword", `{"$defs":{"x":{"properties":{"a":{"x-mcp-header":1}}}},"properties":{"a":{"items":{"x-mcp-header":"A"}}}}`, false},
		{"properties as a property", `{"properties":{"properties":{"x-mcp-header":"A"}}}`, true},
		{"as a value only", `{"description":"x-mcp-header","properties":{"a":{"enum":["x-mcp-header"]}}}`, false},
		{"other case", `{"properties":{"a":{"X-MCP-Header":"A"}}}`, false},
		{"escaped", `{"properties":{"a":{"x\u002dmcp-header":"A"}}}`, true},
		{"not an object", `[1,"x-mcp-header",null]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v any
			require.NoError(t, json.Unmarshal([]byte(tc.json), &v))
			assert.Equal(t, tc.want, headerIn(v))
		})
	}
}

// TestTakeTools: the middleware takes the tools of a page no tool of which
// the SDK's filter could exclude, only when asked, and leaves any other
// result alone.
func TestTakeTools(t *testing.T) {
	plain := &mcp.Tool{Name: "a", InputSchema: map[string]any{"type": "object"}}
	header := &mcp.Tool{Name: "h", InputSchema: map[string]any{"properties": map[string]any{"p": map[string]any{"type": "string", "x-mcp-header": "P"}}}}
	call := func(ctx context.Context, method string, tools []*mcp.Tool) (*mcp.ListToolsResult, error) {
		next := func(context.Context, string, mcp.Request) (mcp.Result, error) {
			return &mcp.ListToolsResult{Tools: tools, NextCursor: "c"}, nil
		}
		res, err := takeTools(next)(ctx, method, nil)
		if err != nil {
			return nil, err
		}
		return res.(*mcp.ListToolsResult), nil
	}

	var take toolsTake
	ctx := context.WithValue(context.Background(), toolsTakeKey{}, &take)
	res, err := call(ctx, "tools/list", []*mcp.Tool{plain, plain})
	require.NoError(t, err)
	assert.Empty(t, res.Tools, "the SDK's filter gets nothing to check")
	assert.Equal(t, "c", res.NextCursor)
	assert.True(t, take.taken)
	assert.Equal(t, []*mcp.Tool{plain, plain}, take.tools)

	for name, tc := range map[string]struct {
		ctx    context.Context
		method string
		tools  []*mcp.Tool
	}{
		"not asked":        {context.Background(), "tools/list", []*mcp.Tool{plain}},
		"another method":   {ctx, "prompts/list", []*mcp.Tool{plain}},
		"a header":         {ctx, "tools/list", []*mcp.Tool{plain, header}},
		"a null tool":      {ctx, "tools/list", []*mcp.Tool{plain, nil}},
		"a nil take value": {context.WithValue(context.Background(), toolsTakeKey{}, (*toolsTake)(nil)), "tools/list", []*mcp.Tool{plain}},
	} {
		t.Run(name, func(t *testing.T) {
			if take, ok := tc.ctx.Value(toolsTakeKey{}).(*toolsTake); ok && take != nil {
				*take = toolsTake{}
			}
			res, err := call(tc.ctx, tc.method, tc.tools)
			require.NoError(t, err)
			assert.Equal(t, tc.tools, res.Tools, "left whole to the SDK")
			if take, ok := tc.ctx.Value(toolsTakeKey{}).(*toolsTake); ok && take != nil {
				assert.False(t, take.taken)
			}
		})
	}
}

// sdkListSession is the raw go-sdk client against a memPeer answering
// every request with *reply, its exclusions recorded by a dropLog: the
// reference listTools must agree with.
func sdkListSession(f *testing.F) (*mcp.ClientSession, *dropLog, *atomic.Pointer[[]byte]) {
	var reply atomic.Pointer[[]byte]
	p := &memPeer{
		version: "2025-11-25",
		handle: func(string, json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
			return json.RawMessage(*reply.Load()), nil
		},
	}
	conn := startMemPeer(f, p)
	drops := new(dropLog)
	client := mcp.NewClient(&mcp.Implementation{Name: "ref", Version: "1"}, &mcp.ClientOptions{Logger: slog.New(drops)})
	cs, err := client.Connect(context.Background(), conn.Transport, &mcp.ClientSessionOptions{ProtocolVersion: PinnedProtocolVersion})
	require.NoError(f, err)
	f.Cleanup(func() { _ = cs.Close() })
	return cs, drops, &reply
}

// FuzzListToolsTaken: for any tools/list result, a session's List gives
// the page the SDK's ListTools alone gives (the same tools, decoded alike,
// the same dropped tools, the same cursor), or both fail — but for the
// tools with an x-mcp-header annotation the SDK could not read, which List
// drops as DropHeaderAnnotationUnreadable (the SDK keeps them unchecked).
func FuzzListToolsTaken(f *testing.F) {
	for _, seed := range []string{
		`{"tools":[]}`,
		invalidHeaderTools,
		`{"tools":[{"name":"a","inputSchema":{"type":"object","properties":{"x":{"type":"string"}}},"_meta":{"k":[1,{"b":null}]},"annotations":{"readOnlyHint":true}}],"nextCursor":"n"}`,
		`{"tools":[{"name":"a","inputSchema":{"type":"object"}},null]}`,
		`{"tools":[{"name":"a","inputSchema":{"properties":{"p":{"type":"string","x-mcp-header":"P"}}}},{"name":"b","inputSchema":{}}]}`,
		`{"tools":[{"name":"a","inputSchema":{"properties":{"p":{"type":"number","x-mcp-header":"P"}}}}]}`,
		`{"tools":[{"name":"a","inputSchema":{"properties":{"p":{"type":"string","X-Mcp-Header":"P"}}}}]}`,
		`{"tools":[{"name":"a","outputSchema":{"type":"object"},"title":"T","description":"D"}]}`,
		`{"tools":[{"name":"a","inputSchema":{"x-mcp-header":"A","properties":{"p":{"items":{"x-mcp-header":"%"}}}}}]}`,
		`{"tools":[{"name":"a","inputSchema":{"properties":{"p":{"type":"object","properties":{"q":{"type":"number","x-mcp-header":"Q"}}}}}},{"name":"b","inputSchema":{"properties":{"r":{"type":"string"}}}}]}`,
		`{"tools":[{"name":"a","inputSchema":{"properties":{"p":true,"q":{"type":"number","x-mcp-header":"Q"}}}}]}`,
		`{"tools":[{"name":1}]}`,
		`{"tools":{}}`,
		`{"Tools":[{"Name":"a"}]}`,
		`null`,
		`{"tools":[{"name":"a","inputSchema":{"properties":{"p":{"x\u002dmcp-header":"P","type":"string"}}}}]}`,
		`{"tools":[{"name":"a","inputSchema":{"description":"\ud83d\ude00 \ud800 \udc00x \u00e9","type":"object"},"outputSchema":{"k":"\ud800\u0041"}}]}`,
		"{\"tools\":[{\"name\":\"a\",\"inputSchema\":{\"description\":\"\xff\xfe\",\"\xc3\":1},\"outputSchema\":{\"\xed\xa0\x80\":2}}]}",
		`{"tools":[{"name":"a","inputSchema":{"maximum":1e400,"minimum":-0,"x":-0.0e-400}}]}`,
		`{"tools":[{"name":"a","inputSchema":{"m":1e400},"inputSchema":{"type":"object"}}]}`,
		`{"tools":[{"name":"a","inputSchema":{"type":"object","type":"string","a":{"b":1,"b":[2e10,1.5E-3]}},"outputSchema":null}]}`,
		`{"tools":[{"name":"a","inputSchema":null,"outputSchema":{"description":"x-mcp-header \\u0041 \"\\\""}}],"ttlMs":5,"cacheScope":"public"}`,
		`{"tools":[{"name":"a","inputSchema":{"description":"x-mcp-header","properties":{"p":{"type":"string"}}}}]}`,
		`{"tools":[{"name":"a","inputSchema":[1,"x",true]},{"name":"b","inputSchema":"s","outputSchema":7}]}`,
	} {
		f.Add([]byte(seed))
	}
	s, reply := replySession(f)
	ref, drops, refReply := sdkListSession(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			t.Skip("the peer cannot send invalid JSON")
		}
		reply.Store(&data)
		refReply.Store(&data)
		got, err := s.List(context.Background(), ports.ListTools, "")
		drops.reset()
		want, refErr := ref.ListTools(context.Background(), &mcp.ListToolsParams{})
		wantDropped := drops.take()
		if refErr != nil {
			if err == nil {
				t.Fatalf("the SDK refused the page, List did not: %v", refErr)
			}
			checkFuzzErr(t, err)
			return
		}
		if err != nil {
			t.Fatalf("List refused a page the SDK takes: %v", err)
		}
		var wantTools []ports.ToolItem
		for _, tool := range want.Tools {
			if tool != nil && headerIn(tool.InputSchema) && !headersReadable(tool.InputSchema) {
				wantDropped = append(wantDropped, ports.DroppedTool{Name: tool.Name, Reason: DropHeaderAnnotationUnreadable})
				continue
			}
			wantTools = append(wantTools, toolItem(tool))
		}
		if wantTools == nil {
			wantTools = []ports.ToolItem{}
		}
		assert.Equal(t, wantTools, asTrees(t, got.Tools))
		assert.Equal(t, wantDropped, got.Dropped)
		assert.Equal(t, want.NextCursor, got.NextCursor)
	})
}

// asTrees returns tools with every schema held as a json.RawMessage
// replaced by the tree encoding/json's Unmarshal decodes from it, which is
// what the catalog reads such a schema as (ports.ToolItem); bytes it
// refuses, or a raw null, fail the test (the own path hands neither).
func asTrees(t *testing.T, tools []ports.ToolItem) []ports.ToolItem {
	t.Helper()
	if tools == nil {
		return nil
	}
	out := make([]ports.ToolItem, len(tools))
	for i, it := range tools {
		it.InputSchema, it.OutputSchema = asTree(t, it.InputSchema), asTree(t, it.OutputSchema)
		out[i] = it
	}
	return out
}

func asTree(t *testing.T, schema any) any {
	t.Helper()
	raw, ok := schema.(json.RawMessage)
	if !ok {
		return schema
	}
	var v any
	require.NoError(t, json.Unmarshal(raw, &v), "a raw schema encoding/json does not decode")
	require.NotNil(t, v, "a raw null schema (the SDK gives nil)")
	return v
}
