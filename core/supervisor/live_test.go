package supervisor

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// dynConnector wraps a portstest.Connector so every session lists the
// tools currently in tools (a server whose tools change at run time).
type dynConnector struct {
	*portstest.Connector
	tools atomic.Pointer[[]ports.ToolItem]
}

func (c *dynConnector) set(items ...ports.ToolItem) { c.tools.Store(&items) }

func (c *dynConnector) Connect(ctx context.Context, t ports.Target, s ports.Signals) (ports.Session, error) {
	sess, err := c.Connector.Connect(ctx, t, s)
	if err != nil {
		return nil, err
	}
	return &dynSession{Session: sess.(*portstest.Session), c: c}, nil
}

type dynSession struct {
	*portstest.Session
	c *dynConnector
}

func (s *dynSession) List(ctx context.Context, kind ports.ListKind, cursor string) (ports.Page, error) {
	if _, err := s.Session.List(ctx, kind, cursor); err != nil {
		return ports.Page{}, err
	}
	return ports.Page{Tools: append([]ports.ToolItem(nil), *s.c.tools.Load()...)}, nil
}

func objTool(name string, props map[string]any) ports.ToolItem {
	return ports.ToolItem{Name: name, InputSchema: map[string]any{"type": "object", "properties": props}}
}

// TestCallThroughToolOfOlderCatalog: a list_changed refresh replaces the
// catalog; a tool taken from the older one is still called when it is
// unchanged, and refused by name when it changed or vanished, with nothing
// sent.
func TestCallThroughToolOfOlderCatalog(t *testing.T) {
	pc := portstest.NewConnector(portstest.SessionScript{Identity: identity("1")})
	dc := &dynConnector{Connector: pc}
	dc.set(objTool("keep", nil), objTool("change", map[string]any{"a": map[string]any{"type": "string"}}), objTool("drop", nil))
	rec := newRecorder()
	srv := New(dc, ports.Target{ServerID: serverID, Kind: ports.TransportHTTP}, &Options{OnChange: rec.OnChange})
	t.Cleanup(func() { _ = srv.Close() })
	require.NoError(t, srv.Connect(context.Background()))
	old := srv.Catalog()
	require.Len(t, old.Tools, 3)
	tool := func(name string) *catalog.Tool {
		tl, ok := old.Tool(catalog.ToolName(serverID, name))
		require.True(t, ok, name)
		return tl
	}

	dc.set(objTool("keep", nil), objTool("change", map[string]any{"a": map[string]any{"type": "number"}}))
	require.True(t, pc.Sessions()[0].FireListChanged(ports.ListTools))
	rec.await(t, srv, "the refreshed catalog", func(st Status) bool { return numTools(st) == 2 })
	require.NotSame(t, old, srv.Catalog())

	_, err := tool("keep").Call(context.Background(), []byte(`{}`))
	require.NoError(t, err, "an unchanged tool of the older catalog is still called")
	_, err = tool("change").Call(context.Background(), []byte(`{"a":"x"}`))
	requireRefusal(t, err, refusal.Config, catalog.ReasonToolChanged)
	_, err = tool("drop").Call(context.Background(), []byte(`{}`))
	requireRefusal(t, err, refusal.Config, catalog.ReasonToolRemoved)
	calls := pc.Sessions()[0].CallRequests()
	require.Len(t, calls, 1)
	assert.Equal(t, "keep", calls[0].Name)

	// A failed refresh keeps the catalog marked stale: its tools stay
	// callable, and the catalog stays stale until a refresh succeeds.
	pc.Sessions()[0].FailOnce("List", refusal.New(refusal.Protocol, "malformed_reply", serverID))
	requireRefusal(t, srv.Refresh(context.Background()), refusal.Protocol, "malformed_reply")
	assert.True(t, srv.Catalog().Stale)
	_, err = tool("keep").Call(context.Background(), []byte(`{}`))
	require.NoError(t, err)
	assert.True(t, srv.Catalog().Stale, "a call does not clear the stale mark")
}
