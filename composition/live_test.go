package composition

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/supervisor"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// liveConnector is a portstest.Connector whose sessions list, per server,
// the tools currently set for it: servers whose tools change at run time.
type liveConnector struct {
	*portstest.Connector
	mu    sync.Mutex
	tools map[string][]ports.ToolItem
}

func newLiveConnector() *liveConnector {
	return &liveConnector{
		Connector: portstest.NewConnector(portstest.SessionScript{Identity: ports.SessionIdentity{
			ProtocolVersion: "2025-11-25", ServerName: "fake", ServerVersion: "1",
			Declared: []ports.ListKind{ports.ListTools},
		}}),
		tools: map[string][]ports.ToolItem{},
	}
}

// set sets the tools server lists from now on.
func (c *liveConnector) set(server string, items ...ports.ToolItem) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tools[server] = items
}

func (c *liveConnector) Connect(ctx context.Context, t ports.Target, s ports.Signals) (ports.Session, error) {
	sess, err := c.Connector.Connect(ctx, t, s)
	if err != nil {
		return nil, err
	}
	return &liveSession{Session: sess.(*portstest.Session), c: c}, nil
}

// changed fires a tools list_changed on server's latest session.
func (c *liveConnector) changed(t *testing.T, server string) {
	t.Helper()
	ss := c.Sessions()
	for i := len(ss) - 1; i >= 0; i-- {
		if ss[i].Target().ServerID == server {
			require.True(t, ss[i].FireListChanged(ports.ListTools))
			return
		}
	}
	t.Fatalf("no session of %s", server)
}

type liveSession struct {
	*portstest.Session
	c *liveConnector
}

func (s *liveSession) List(ctx context.Context, kind ports.ListKind, cursor string) (ports.Page, error) {
	if _, err := s.Session.List(ctx, kind, cursor); err != nil {
		return ports.Page{}, err
	}
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return ports.Page{Tools: append([]ports.ToolItem(nil), s.c.tools[s.Target().ServerID]...)}, nil
}

// tool is a tool item named name whose arguments have the given
// properties, all strings (or, with typ, of that type).
func tool(name, typ string, props ...string) ports.ToolItem {
	p := map[string]any{}
	for _, n := range props {
		p[n] = map[string]any{"type": typ}
	}
	return ports.ToolItem{Name: name, Description: "tool " + name, InputSchema: map[string]any{"type": "object", "properties": p}}
}

// liveSrcs defines HTTP servers of the given names (the fake connector
// never dials them).
func liveSrcs(names ...string) []definition.Source {
	doc := `{"mcpServers": {`
	for i, n := range names {
		if i > 0 {
			doc += ","
		}
		doc += `"` + n + `": {"type": "http", "url": "http://127.0.0.1:1/mcp"}`
	}
	return userSrc(doc + `}}`)
}

// fastSupervisor keeps backoff sleeps short.
var fastSupervisor = &supervisor.Options{BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}

// awaitGen waits until the Fleet's current generation satisfies pred.
func awaitGen(t *testing.T, f *Fleet, what string, pred func(Generation) bool) Generation {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		g := f.Current()
		if pred(g) {
			return g
		}
		select {
		case <-g.Changed:
		case <-deadline:
			t.Fatalf("no generation with %s", what)
		}
	}
}

func hostTool(t *testing.T, s *catalog.Set, server, name string) *catalog.Tool {
	t.Helper()
	tl, ok := s.Tool(catalog.ToolName(server, name))
	require.True(t, ok, "%s/%s", server, name)
	return tl
}

func TestFleetFollowsListChanged(t *testing.T) {
	c := newLiveConnector()
	c.set("a", tool("keep", "string", "x"), tool("change", "string", "x"), tool("drop", "string"))
	c.set("b", tool("other", "string"))
	r := newRig(t, Config{})
	f := r.host.Connect(context.Background(), liveSrcs("a", "b"), &ConnectOptions{connector: c, Supervisor: fastSupervisor})
	t.Cleanup(func() { _ = f.Close() })

	g1 := f.Current()
	require.False(t, g1.Closed)
	require.Len(t, g1.Set.Tools(), 4)
	for _, sr := range f.Servers() {
		assert.Equal(t, StateConnected, sr.State)
		assert.Equal(t, refusal.None, sr.Class, "a connected server without a failure has no class")
		assert.Empty(t, sr.Reason)
	}
	keep, change, drop := hostTool(t, g1.Set, "a", "keep"), hostTool(t, g1.Set, "a", "change"), hostTool(t, g1.Set, "a", "drop")

	c.set("a", tool("keep", "string", "x"), tool("change", "number", "x"), tool("added", "string"))
	c.changed(t, "a")
	g2 := awaitGen(t, f, "a's new tools", func(g Generation) bool {
		_, ok := g.Set.Tool(catalog.ToolName("a", "added"))
		return ok
	})
	select {
	case <-g1.Changed:
	default:
		t.Fatal("the first generation's Changed is still open")
	}
	assert.Greater(t, g2.N, g1.N)
	_, ok := g2.Set.Tool(catalog.ToolName("a", "drop"))
	assert.False(t, ok, "a removed tool leaves the set")
	assert.ElementsMatch(t, []string{"mcp__a__added", "mcp__a__change", "mcp__a__keep"}, toolNames(result(t, f, "a")), "Servers follows")

	ctx := context.Background()
	_, err := keep.Call(ctx, json.RawMessage(`{"x":"v"}`))
	require.NoError(t, err, "an unchanged tool of the older generation is still called")
	_, err = change.Call(ctx, json.RawMessage(`{"x":"v"}`))
	assert.Equal(t, catalog.ReasonToolChanged, refusal.ReasonOf(err))
	assert.Equal(t, refusal.Config, refusal.ClassOf(err))
	_, err = drop.Call(ctx, json.RawMessage(`{}`))
	assert.Equal(t, catalog.ReasonToolRemoved, refusal.ReasonOf(err))
	_, err = hostTool(t, g2.Set, "a", "change").Call(ctx, json.RawMessage(`{"x":1}`))
	require.NoError(t, err, "the current tool validates against the current schema")

	// By host-facing name, and by (server, tool).
	_, err = f.CallHostTool(ctx, catalog.ToolName("a", "added"), nil)
	require.NoError(t, err)
	_, err = f.CallServerTool(ctx, "a", "added", nil)
	require.NoError(t, err)
	_, err = f.CallHostTool(ctx, catalog.ToolName("a", "drop"), nil)
	assert.Equal(t, ReasonUnknownTool, refusal.ReasonOf(err))
	_, err = f.CallHostTool(ctx, "added", nil)
	assert.Equal(t, ReasonUnknownTool, refusal.ReasonOf(err), "a server's tool name is not a host-facing name")

	// A failed refresh: the catalog is kept, marked stale, in the set and
	// in Servers, and stays so until a refresh succeeds.
	var sess *portstest.Session
	for _, s := range c.Sessions() {
		if s.Target().ServerID == "a" {
			sess = s
		}
	}
	sess.Fail("List", refusal.New(refusal.Protocol, "malformed_reply", "a"))
	c.changed(t, "a")
	awaitGen(t, f, "a stale catalog", func(g Generation) bool { return result(t, f, "a").Stale })
	a := result(t, f, "a")
	assert.Equal(t, StateConnected, a.State)
	assert.Equal(t, refusal.Protocol, a.Class)
	assert.Equal(t, "malformed_reply", a.Reason)
	c.changed(t, "a") // fails again
	require.Eventually(t, func() bool { return sess.Calls("List") >= 3 }, 10*time.Second, time.Millisecond)
	require.NoError(t, f.Wait(ctx))
	for _, cat := range f.Set().Catalogs() {
		assert.Equal(t, cat.Server == "a", cat.Stale, cat.Server)
	}
	assert.True(t, result(t, f, "a").Stale, "still stale after another failed refresh")
	sess.Clear()
	c.changed(t, "a")
	awaitGen(t, f, "a fresh catalog", func(g Generation) bool { return !result(t, f, "a").Stale })
	assert.Equal(t, refusal.None, result(t, f, "a").Class)
}

func TestFleetBackgroundConnect(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	c := newLiveConnector()
	c.set("a", tool("t", "string"))
	release := make(chan struct{})
	c.SetScript("a", portstest.SessionScript{
		Identity: ports.SessionIdentity{ProtocolVersion: "2025-11-25", ServerVersion: "1", Declared: []ports.ListKind{ports.ListTools}},
		OnConnect: func(ctx context.Context, _ ports.Target) error {
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
	})
	r := newRig(t, Config{})
	f := r.host.Connect(context.Background(), liveSrcs("a"), &ConnectOptions{connector: c, Background: true})
	a := result(t, f, "a")
	assert.Equal(t, StateConnecting, a.State, "Connect returned while a connects")
	assert.Equal(t, refusal.None, a.Class)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	assert.Equal(t, supervisor.ReasonTimeout, refusal.ReasonOf(f.Wait(ctx)))
	cancel()
	close(release)
	require.NoError(t, f.Wait(context.Background()))
	assert.Equal(t, StateConnected, result(t, f, "a").State)
	_, err := f.CallHostTool(context.Background(), catalog.ToolName("a", "t"), nil)
	require.NoError(t, err)

	// Close ends a background connect that is still running.
	c.SetScript("b", portstest.SessionScript{OnConnect: func(ctx context.Context, _ ports.Target) error {
		<-ctx.Done()
		return ctx.Err()
	}})
	added, err := f.Add(context.Background(), liveSrcs("a", "b"))
	require.NoError(t, err)
	require.Len(t, added, 1, "no names: every defined name the Fleet lacks")
	assert.Equal(t, "b", added[0].Name)
	assert.Equal(t, StateConnecting, added[0].State)
	g := f.Current()
	require.NoError(t, f.Close())
	<-g.Changed
	last := f.Current()
	assert.True(t, last.Closed)
	assert.Nil(t, last.Changed)
	assert.Empty(t, last.Set.Tools())
	for _, sr := range f.Servers() {
		assert.Equal(t, StateClosed, sr.State, sr.Name)
	}
}

func TestFleetReconnectAfterFailed(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	c := newLiveConnector()
	c.set("a", tool("t", "string"))
	c.Fail("Connect", refusal.New(refusal.Refused, "egress_refused", "a"))
	r := newRig(t, Config{})
	f := r.host.Connect(context.Background(), liveSrcs("a"), &ConnectOptions{connector: c, Supervisor: fastSupervisor})
	defer f.Close()
	a := result(t, f, "a")
	require.Equal(t, StateFailed, a.State)
	assert.Equal(t, refusal.Refused, a.Class)
	assert.Equal(t, "egress_refused", a.Reason)
	assert.Contains(t, f.Set().Rejected(), catalog.Rejected{Server: "a", Kind: catalog.KindServer, Name: "a", Reason: "egress_refused"})

	err := f.Reconnect(context.Background(), "a")
	assert.Equal(t, "egress_refused", refusal.ReasonOf(err), "the failure stays until its cause is fixed")
	c.Clear()
	g := f.Current()
	require.NoError(t, f.Reconnect(context.Background(), "a"), "Failed is not final")
	assert.Equal(t, StateConnected, result(t, f, "a").State)
	assert.Greater(t, f.Current().N, g.N)
	assert.NotContains(t, f.Set().Rejected(), catalog.Rejected{Server: "a", Kind: catalog.KindServer, Name: "a", Reason: "egress_refused"})
	require.NoError(t, f.Reconnect(context.Background(), "a"), "a Ready server: nothing to do")

	// A reconnect whose ctx ended changes nothing.
	c.Fail("Connect", refusal.New(refusal.Refused, "egress_refused", "a"))
	c.Sessions()[len(c.Sessions())-1].Disconnect()
	awaitGen(t, f, "a failed again", func(Generation) bool { return result(t, f, "a").State == StateFailed })
	c.Clear()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = f.Reconnect(ctx, "a")
	assert.Equal(t, supervisor.ReasonCancelled, refusal.ReasonOf(err))
	a = result(t, f, "a")
	assert.Equal(t, StateFailed, a.State)
	assert.Equal(t, "egress_refused", a.Reason, "the failure of its own stays")

	assert.Equal(t, ReasonUnknownServer, refusal.ReasonOf(f.Reconnect(context.Background(), "ghost")))
}

func TestFleetAddRemove(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	c := newLiveConnector()
	c.set("a", tool("t", "string"))
	c.set("b", tool("u", "string"))
	r := newRig(t, Config{})
	srcs := liveSrcs("a", "b")
	f := r.host.Connect(context.Background(), srcs, &ConnectOptions{connector: c, Names: []string{"a"}})
	t.Cleanup(func() { _ = f.Close() })
	require.Len(t, f.Servers(), 1)
	old := f.Current()
	ta := hostTool(t, old.Set, "a", "t")

	added, err := f.Add(context.Background(), srcs, "b", "ghost")
	require.NoError(t, err)
	require.Len(t, added, 2)
	assert.Equal(t, StateConnected, added[0].State, "Add blocks like Connect")
	assert.Equal(t, StateUnknown, added[1].State)
	assert.Equal(t, refusal.None, added[1].Class)
	g := f.Current()
	assert.Greater(t, g.N, old.N)
	hostTool(t, g.Set, "b", "u")
	_, err = f.Add(context.Background(), srcs, "b")
	assert.Equal(t, ReasonServerExists, refusal.ReasonOf(err))
	assert.Equal(t, refusal.Config, refusal.ClassOf(err))

	require.NoError(t, f.Remove("a"))
	_, ok := f.Set().Tool(catalog.ToolName("a", "t"))
	assert.False(t, ok)
	assert.Equal(t, []string{"b", "ghost"}, func() (n []string) {
		for _, s := range f.Servers() {
			n = append(n, s.Name)
		}
		return n
	}())
	_, err = ta.Call(context.Background(), nil)
	assert.Equal(t, ReasonServerRemoved, refusal.ReasonOf(err), "a removed server's tools refuse")
	assert.Equal(t, refusal.Config, refusal.ClassOf(err))
	assert.Equal(t, ReasonUnknownServer, refusal.ReasonOf(f.Remove("a")))

	// The name can be added again, with a new supervisor.
	added, err = f.Add(context.Background(), srcs, "a")
	require.NoError(t, err)
	require.Len(t, added, 1)
	assert.Equal(t, StateConnected, added[0].State)
	_, err = f.CallHostTool(context.Background(), catalog.ToolName("a", "t"), nil)
	require.NoError(t, err)

	require.NoError(t, f.Close())
	_, err = f.Add(context.Background(), srcs, "c")
	assert.Equal(t, ReasonFleetClosed, refusal.ReasonOf(err))
	assert.Equal(t, ReasonFleetClosed, refusal.ReasonOf(f.Remove("b")))
	assert.Equal(t, ReasonFleetClosed, refusal.ReasonOf(f.Reconnect(context.Background(), "b")))
	for _, err := range []error{err, f.Remove("b"), f.Reconnect(context.Background(), "b")} {
		assert.Equal(t, refusal.Config, refusal.ClassOf(err), "a closed Fleet is no bug of mcpward")
	}
}

// TestFleetConcurrentUse: reads, calls, refreshes, Add and Remove at once
// (for -race).
func TestFleetConcurrentUse(t *testing.T) {
	c := newLiveConnector()
	c.set("a", tool("t", "string"))
	c.set("b", tool("u", "string"))
	r := newRig(t, Config{})
	srcs := liveSrcs("a", "b")
	f := r.host.Connect(context.Background(), srcs, &ConnectOptions{connector: c, Names: []string{"a"}})
	t.Cleanup(func() { _ = f.Close() })
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				g := f.Current()
				for _, tl := range g.Set.Tools() {
					_, _ = tl.Call(context.Background(), nil)
				}
				_ = f.Servers()
				if i == 0 {
					c.changed(t, "a")
				}
			}
		}()
	}
	for range 10 {
		_, _ = f.Add(context.Background(), srcs, "b")
		_ = f.Remove("b")
	}
	wg.Wait()
}

// TestFleetEvaluatesOnce: Connect and Add evaluate their sources once
// (every activation decision is an audit record).
func TestFleetEvaluatesOnce(t *testing.T) {
	c := newLiveConnector()
	r := newRig(t, Config{})
	srcs := liveSrcs("a", "b")
	ctx := context.Background()
	count := func() int {
		recs, err := r.audit.Records(ctx)
		require.NoError(t, err)
		return len(recs)
	}
	r.host.Evaluate(ctx, srcs)
	one := count()
	require.Positive(t, one)

	f := r.host.Connect(ctx, srcs, &ConnectOptions{connector: c})
	t.Cleanup(func() { _ = f.Close() })
	assert.Equal(t, 2*one, count(), "Connect evaluated once")
	require.NoError(t, f.Remove("b"))
	_, err := f.Add(ctx, srcs)
	require.NoError(t, err)
	assert.Equal(t, 3*one, count(), "Add evaluated once")
}
