package catalog

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// liveCaller is a fakeCaller that knows the server's current catalog.
type liveCaller struct {
	fakeCaller
	cur atomic.Pointer[Catalog]
}

func (c *liveCaller) Catalog() *Catalog { return c.cur.Load() }

var _ CatalogSource = (*liveCaller)(nil)

func TestCallOfAnOlderCatalog(t *testing.T) {
	const textSchema = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`
	const numSchema = `{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`
	build := func(c Caller, items ...ports.ToolItem) *Catalog {
		return Build("srv", ports.SessionIdentity{ServerID: "srv"}, Lists{Tools: items}, c, nil)
	}
	tests := []struct {
		name    string
		next    func(t *testing.T) []ports.ToolItem // the current listing; nil: no catalog
		stale   bool                                // the current catalog is the first, marked stale
		args    string
		reason  string // "" when the call goes through
		wantArg string // the arguments the server gets
	}{
		{name: "unchanged after a refresh", next: func(t *testing.T) []ports.ToolItem {
			return []ports.ToolItem{item(t, "t", textSchema), item(t, "new", `{}`)}
		}, args: `{"text":"hi"}`, wantArg: `{"text":"hi"}`},
		{name: "schema changed", next: func(t *testing.T) []ports.ToolItem {
			return []ports.ToolItem{item(t, "t", numSchema)}
		}, args: `{"text":"hi"}`, reason: ReasonToolChanged},
		{name: "schema changed, old arguments now invalid are not validated", next: func(t *testing.T) []ports.ToolItem {
			return []ports.ToolItem{item(t, "t", numSchema)}
		}, args: `{"n":1}`, reason: ReasonToolChanged},
		{name: "description changed", next: func(t *testing.T) []ports.ToolItem {
			it := item(t, "t", textSchema)
			it.Description = "now something else"
			return []ports.ToolItem{it}
		}, args: `{"text":"hi"}`, reason: ReasonToolChanged},
		{name: "removed", next: func(t *testing.T) []ports.ToolItem {
			return []ports.ToolItem{item(t, "other", `{}`)}
		}, args: `{"text":"hi"}`, reason: ReasonToolRemoved},
		{name: "stale catalog keeps the tool", stale: true, args: `{"text":"hi"}`, wantArg: `{"text":"hi"}`},
		{name: "no current catalog: the caller decides", args: `{"text":"hi"}`, wantArg: `{"text":"hi"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &liveCaller{}
			c.res = ports.CallResult{Content: []byte(`[{"type":"text","text":"ok"}]`)}
			first := build(c, item(t, "t", textSchema))
			c.cur.Store(first)
			tool, ok := first.Tool(ToolName("srv", "t"))
			require.True(t, ok)
			switch {
			case tt.stale:
				c.cur.Store(first.MarkStale())
			case tt.next != nil:
				c.cur.Store(build(c, tt.next(t)...))
			default:
				c.cur.Store(nil)
			}
			res, err := tool.Call(context.Background(), []byte(tt.args))
			if tt.reason != "" {
				require.Error(t, err)
				assert.Equal(t, refusal.Config, refusal.ClassOf(err))
				assert.Equal(t, tt.reason, refusal.ReasonOf(err))
				assert.Empty(t, c.requests(), "nothing is sent for a tool of an older catalog")
				return
			}
			require.NoError(t, err)
			assert.JSONEq(t, `[{"type":"text","text":"ok"}]`, string(res.Content))
			reqs := c.requests()
			require.Len(t, reqs, 1)
			assert.Equal(t, "t", reqs[0].Name)
			assert.JSONEq(t, tt.wantArg, string(reqs[0].Arguments))
		})
	}
}

func TestCallWithoutCatalogSourceIsUnchecked(t *testing.T) {
	c := &fakeCaller{res: ports.CallResult{Content: []byte(`[]`)}}
	tool := oneTool(t, `{"type":"object"}`, c, nil)
	_, err := tool.Call(context.Background(), nil)
	require.NoError(t, err)
	assert.Len(t, c.requests(), 1)
}

func TestSame(t *testing.T) {
	a := oneTool(t, `{"type":"object"}`, nil, nil)
	b := oneTool(t, `{"type":"object"}`, nil, nil)
	c := oneTool(t, `{"type":"object","properties":{"x":{}}}`, nil, nil)
	capped := oneTool(t, `{"type":"object"}`, nil, &Options{AdmissionCap: 5})
	assert.True(t, a.Same(a))
	assert.True(t, a.Same(b), "equal listings give Same tools")
	assert.False(t, a.Same(c), "another schema")
	assert.False(t, a.Same(capped), "another result cap")
	assert.False(t, a.Same(nil))
}

func TestSetToolAndToolsOneType(t *testing.T) {
	cat := Build("s", ports.SessionIdentity{}, Lists{Tools: []ports.ToolItem{item(t, "a", `{}`), item(t, "b", `{}`)}}, nil, nil)
	s := NewSet([]*Catalog{cat}, nil)
	tools := s.Tools()
	host := s.ModelTools()
	require.Len(t, tools, 2)
	require.Len(t, host, 2)
	for i, tool := range tools {
		got, ok := s.Tool(tool.HostName())
		require.True(t, ok)
		assert.Same(t, tool, got)
		assert.Equal(t, ports.Tool(tool), host[i])
	}
}
