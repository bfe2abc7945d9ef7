package mcpsession

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// drain lists every page of kind.
func drain(t testing.TB, s ports.Session, kind ports.ListKind) (pages []ports.Page) {
	t.Helper()
	cursor := ""
	for i := 0; ; i++ {
		require.Less(t, i, 10000, "endless pagination")
		p, err := s.List(context.Background(), kind, cursor)
		require.NoError(t, err)
		pages = append(pages, p)
		if p.NextCursor == "" {
			return pages
		}
		cursor = p.NextCursor
	}
}

// TestListPagination drains a go-sdk server that pages its 53 tools 7 at a
// time, over each transport.
func TestListPagination(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			srv := mcp.NewServer(&mcp.Implementation{Name: "pager", Version: "1"}, &mcp.ServerOptions{PageSize: 7})
			var want []string
			for i := range 53 {
				name := fmt.Sprintf("tool%02d", i)
				want = append(want, name)
				srv.AddTool(&mcp.Tool{
					Name:        name,
					Title:       "T" + name,
					Description: "D" + name,
					InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"array","items":{"type":"integer"}},"o":{"type":"object","properties":{"x":{"type":"number"}}}},"required":["a"]}`),
					Meta:        mcp.Meta{"vendor/key": float64(i)},
				}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{}, nil
				})
			}
			s := connect(t, New(tc.dial(t, srv), nil), ports.Signals{})
			pages := drain(t, s, ports.ListTools)
			assert.Len(t, pages, 8, "53 tools in pages of 7")
			var got []string
			for i, p := range pages {
				assert.Nil(t, p.Items, "a tools page has no Items")
				assert.Empty(t, p.Dropped)
				if i < len(pages)-1 {
					assert.Len(t, p.Tools, 7)
					assert.NotEmpty(t, p.NextCursor)
				}
				for _, tool := range p.Tools {
					got = append(got, tool.Name)
					assert.Equal(t, "T"+tool.Name, tool.Title)
					assert.Equal(t, "D"+tool.Name, tool.Description)
					schema, ok := asTree(t, tool.InputSchema).(map[string]any)
					require.True(t, ok, "the schema, as received or decoded, is the server's: %T", tool.InputSchema)
					assert.Equal(t, "object", schema["type"])
					assert.Equal(t, []any{"a"}, schema["required"])
					props := schema["properties"].(map[string]any)
					assert.Equal(t, map[string]any{"type": "array", "items": map[string]any{"type": "integer"}}, props["a"])
					require.NotNil(t, tool.Meta)
					assert.Contains(t, tool.Meta, "vendor/key")
				}
			}
			assert.Equal(t, want, got, "every tool, in the server's order")
		})
	}
}

func TestListOtherKinds(t *testing.T) {
	for _, tc := range transports {
		t.Run(tc.name, func(t *testing.T) {
			s := connect(t, New(tc.dial(t, newSDKServer(nil)), nil), ports.Signals{})
			tests := []struct {
				kind ports.ListKind
				want string
			}{
				{ports.ListPrompts, `{"name":"greet","description":"says hello"}`},
				{ports.ListResources, `{"name":"a","uri":"file:///a.txt"}`},
				{ports.ListResourceTemplates, `{"name":"files","uriTemplate":"file:///{name}"}`},
			}
			for _, tt := range tests {
				t.Run(string(tt.kind), func(t *testing.T) {
					p, err := s.List(context.Background(), tt.kind, "")
					require.NoError(t, err)
					assert.Nil(t, p.Tools)
					require.Len(t, p.Items, 1)
					assert.JSONEq(t, tt.want, string(p.Items[0]))
					assert.Empty(t, p.NextCursor)
				})
			}
		})
	}
}

// TestListUndeclared: a kind the server did not declare is refused without
// a request; the raw server counts what arrives.
func TestListUndeclared(t *testing.T) {
	kinds := []ports.ListKind{ports.ListTools, ports.ListPrompts, ports.ListResources, ports.ListResourceTemplates}
	tests := []struct {
		name     string
		caps     map[string]any
		declared map[ports.ListKind]bool
	}{
		{"nothing", map[string]any{}, nil},
		{"prompts only", map[string]any{"prompts": map[string]any{}}, map[ports.ListKind]bool{ports.ListPrompts: true}},
		{"tools only", map[string]any{"tools": map[string]any{}}, map[ports.ListKind]bool{ports.ListTools: true}},
		{"resources only", map[string]any{"resources": map[string]any{}}, map[ports.ListKind]bool{ports.ListResources: true, ports.ListResourceTemplates: true}},
	}
	methods := map[ports.ListKind]string{
		ports.ListTools: "tools/list", ports.ListPrompts: "prompts/list",
		ports.ListResources: "resources/list", ports.ListResourceTemplates: "resources/templates/list",
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := &rawServer{version: "2025-11-25", caps: tt.caps, handle: func(method string, _ json.RawMessage) (any, *jsonrpc.Error) {
				key := map[string]string{"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources", "resources/templates/list": "resourceTemplates"}[method]
				return map[string]any{key: []any{}}, nil
			}}
			s := connect(t, New(rawDialer(t, rs), nil), ports.Signals{})
			for _, k := range kinds {
				_, err := s.List(context.Background(), k, "")
				if tt.declared[k] {
					require.NoError(t, err, string(k))
					assert.Equal(t, 1, rs.count(methods[k]))
					continue
				}
				re := requireRefusal(t, err, refusal.Unsupported, "list_undeclared")
				assert.Equal(t, "srv", re.Server)
				assert.Zero(t, rs.count(methods[k]), "no %s request for an undeclared kind", methods[k])
			}
			_, err := s.List(context.Background(), "bogus", "")
			requireRefusal(t, err, refusal.Config, "list_kind_unknown")
		})
	}
}

// invalidHeaderTools is a tools/list page with tools the SDK drops.
const invalidHeaderTools = `{"tools":[
 {"name":"ok","inputSchema":{"type":"object"}},
 {"name":"bad-type","inputSchema":{"type":"object","properties":{"r":{"type":"object","x-mcp-header":"Region"}}}},
 null,
 {"name":"bad-name","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"` + canary + ` bad"}}}},
 {"name":"ok2","inputSchema":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}}
],"nextCursor":"p2"}`

func TestListDropped(t *testing.T) {
	wantDropped := []ports.DroppedTool{
		{Name: "bad-type", Reason: "invalid_header_annotation"},
		{Name: "", Reason: "null_tool"},
		{Name: "bad-name", Reason: "invalid_header_annotation"},
	}
	page2 := `{"tools":[{"name":"last","inputSchema":{"type":"object"}}]}`
	handle := func(method string, params json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
		var p struct{ Cursor string }
		_ = json.Unmarshal(params, &p)
		if p.Cursor == "p2" {
			return json.RawMessage(page2), nil
		}
		return json.RawMessage(invalidHeaderTools), nil
	}

	check := func(t *testing.T, s ports.Session) {
		p, err := s.List(context.Background(), ports.ListTools, "")
		require.NoError(t, err)
		var names []string
		for _, tool := range p.Tools {
			names = append(names, tool.Name)
		}
		assert.Equal(t, []string{"ok", "ok2"}, names)
		assert.Equal(t, wantDropped, p.Dropped)
		assert.Equal(t, "p2", p.NextCursor)

		p, err = s.List(context.Background(), ports.ListTools, "p2")
		require.NoError(t, err)
		assert.Len(t, p.Tools, 1)
		assert.Empty(t, p.Dropped, "drops belong to their own page")
	}

	t.Run("memory", func(t *testing.T) {
		s := connect(t, New(fixedDialer(startMemPeer(t, &memPeer{version: "2025-11-25", handle: handle})), nil), ports.Signals{})
		check(t, s)
	})
	t.Run("http", func(t *testing.T) {
		rs := &rawServer{version: "2025-11-25", handle: func(method string, params json.RawMessage) (any, *jsonrpc.Error) {
			return handle(method, params)
		}}
		s := connect(t, New(rawDialer(t, rs), nil), ports.Signals{})
		check(t, s)
	})
	t.Run("concurrent pages keep their own drops", func(t *testing.T) {
		s := connect(t, New(fixedDialer(startMemPeer(t, &memPeer{version: "2025-11-25", handle: handle})), nil), ports.Signals{})
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cursor := ""
				if i%2 == 1 {
					cursor = "p2"
				}
				p, err := s.List(context.Background(), ports.ListTools, cursor)
				if !assert.NoError(t, err) {
					return
				}
				if cursor == "" {
					assert.Equal(t, wantDropped, p.Dropped)
				} else {
					assert.Empty(t, p.Dropped)
				}
			}()
		}
		wg.Wait()
	})
	t.Run("go-sdk server through middleware", func(t *testing.T) {
		// A real go-sdk server cannot register such a tool (AddTool
		// panics), so a receiving middleware appends it to the result.
		srv := newSDKServer(nil)
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				res, err := next(ctx, method, req)
				if lt, ok := res.(*mcp.ListToolsResult); ok && err == nil {
					lt.Tools = append(lt.Tools, &mcp.Tool{Name: "hdr", InputSchema: map[string]any{
						"type": "object", "properties": map[string]any{"p": map[string]any{"type": "array", "x-mcp-header": "P"}},
					}})
				}
				return res, err
			}
		})
		s := connect(t, New(memDialer(t, srv), nil), ports.Signals{})
		p, err := s.List(context.Background(), ports.ListTools, "")
		require.NoError(t, err)
		assert.Equal(t, []ports.DroppedTool{{Name: "hdr", Reason: "invalid_header_annotation"}}, p.Dropped)
		for _, tool := range p.Tools {
			assert.NotEqual(t, "hdr", tool.Name)
		}
	})
}

// TestListFailures maps list errors without the server's text.
func TestListFailures(t *testing.T) {
	tests := []struct {
		name   string
		result string
		err    *jsonrpc.Error
		class  refusal.Class
		reason string
	}{
		{"json-rpc error", "", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: canary}, refusal.Protocol, "list_rejected"},
		{"tools is not an array", `{"tools":"` + canary + `"}`, nil, refusal.Protocol, "malformed_reply"},
		{"tool is not an object", `{"tools":["` + canary + `"]}`, nil, refusal.Protocol, "malformed_reply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			handle := func(string, json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
				if tt.err != nil {
					return nil, tt.err
				}
				return json.RawMessage(tt.result), nil
			}
			s := connect(t, New(fixedDialer(startMemPeer(t, &memPeer{version: "2025-11-25", handle: handle})), nil), ports.Signals{})
			_, err := s.List(context.Background(), ports.ListTools, "")
			requireRefusal(t, err, tt.class, tt.reason)
		})
	}
	t.Run("http status 500", func(t *testing.T) {
		rs := &rawServer{version: "2025-11-25", status: 500, body: canary}
		s := connect(t, New(rawDialer(t, rs), nil), ports.Signals{})
		_, err := s.List(context.Background(), ports.ListTools, "")
		requireRefusal(t, err, refusal.Transient, "transport_rejected")
	})
}
