package composition

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/supervisor"
)

// TestFleetLiveEndToEnd: the example server run with -dynamic adds,
// replaces and removes tools at run time; its tools/list_changed goes
// through the SDK, the session adapter and the supervisor to the running
// Fleet, whose generations follow, and a tool of an older generation is
// refused by name.
func TestFleetLiveEndToEnd(t *testing.T) {
	bin := privateExample(t)
	r := newRig(t, Config{Authority: NewRootAuthority(t.TempDir(), nil)})
	b, _ := json.Marshal(bin)
	srcs := userSrc(`{"mcpServers": {"example": {"command": ` + string(b) + `, "args": ["-dynamic"]}}}`)
	var log statusLog
	f := r.host.Connect(context.Background(), srcs, &ConnectOptions{OnStatus: log.on})
	t.Cleanup(func() { _ = f.Close() })
	ctx := context.Background()
	extra := catalog.ToolName("example", "extra")
	has := func(g Generation, name string) bool { _, ok := g.Set.Tool(name); return ok }

	g1 := f.Current()
	require.True(t, has(g1, catalog.ToolName("example", "tool_add")), "servers: %+v", f.Servers())
	require.False(t, has(g1, extra))

	// Added at run time.
	res, err := f.CallHostTool(ctx, catalog.ToolName("example", "tool_add"), json.RawMessage(`{"name":"extra","field":"a"}`))
	require.NoError(t, err)
	require.False(t, res.IsError)
	g2 := awaitGen(t, f, "the added tool", func(g Generation) bool { return has(g, extra) })
	assert.Greater(t, g2.N, g1.N)
	old, _ := g2.Set.Tool(extra)
	res, err = f.CallHostTool(ctx, extra, json.RawMessage(`{"a":"hi"}`))
	require.NoError(t, err)
	assert.Equal(t, "hi", text(t, res))
	assert.Contains(t, toolNames(result(t, f, "example")), extra, "Servers follows")

	// Replaced with another schema: the older tool is refused by name,
	// its old arguments never validated against the stale schema.
	_, err = f.CallServerTool(ctx, "example", "tool_add", json.RawMessage(`{"name":"extra","field":"b"}`))
	require.NoError(t, err)
	g3 := awaitGen(t, f, "the replaced tool", func(g Generation) bool {
		tl, ok := g.Set.Tool(extra)
		return ok && !tl.Same(old)
	})
	_, err = old.Call(ctx, json.RawMessage(`{"a":"hi"}`))
	assert.Equal(t, catalog.ReasonToolChanged, refusal.ReasonOf(err))
	assert.Equal(t, refusal.Config, refusal.ClassOf(err))
	cur, _ := g3.Set.Tool(extra)
	res, err = cur.Call(ctx, json.RawMessage(`{"b":"there"}`))
	require.NoError(t, err)
	assert.Equal(t, "there", text(t, res))

	// Removed.
	_, err = f.CallHostTool(ctx, catalog.ToolName("example", "tool_remove"), json.RawMessage(`{"name":"extra"}`))
	require.NoError(t, err)
	awaitGen(t, f, "the removed tool gone", func(g Generation) bool { return !has(g, extra) })
	_, err = cur.Call(ctx, json.RawMessage(`{"b":"there"}`))
	assert.Equal(t, catalog.ReasonToolRemoved, refusal.ReasonOf(err))
	_, err = f.CallHostTool(ctx, extra, json.RawMessage(`{"b":"there"}`))
	assert.Equal(t, ReasonUnknownTool, refusal.ReasonOf(err))
	_, err = f.CallServerTool(ctx, "example", "extra", json.RawMessage(`{"b":"there"}`))
	assert.Equal(t, ReasonUnknownTool, refusal.ReasonOf(err))

	// The tools unchanged by all this are still the older generations'.
	echo, _ := g1.Set.Tool(catalog.ToolName("example", "echo"))
	res, err = echo.Call(ctx, json.RawMessage(`{"text":"still"}`))
	require.NoError(t, err)
	assert.Equal(t, "still", text(t, res))
	ex := result(t, f, "example")
	assert.Equal(t, StateConnected, ex.State)
	assert.Equal(t, refusal.None, ex.Class)
	assert.False(t, ex.Stale)
	assert.Equal(t, supervisor.Ready, log.states("example")[len(log.states("example"))-1])

	require.NoError(t, f.Close())
	assert.Zero(t, running(bin))
}

// TestAbortedStdioCallEndsTheProcess pins what ports.Tool.Call documents:
// aborting a stdio call ends the server's process, the other call in
// flight fails Transient, the supervisor starts a new process at once, and
// what the old one held (a tool it added at run time) is gone from the
// Fleet's next generation.
func TestAbortedStdioCallEndsTheProcess(t *testing.T) {
	bin := privateExample(t)
	r := newRig(t, Config{Authority: NewRootAuthority(t.TempDir(), nil)})
	b, _ := json.Marshal(bin)
	srcs := userSrc(`{"mcpServers": {"example": {"command": ` + string(b) + `, "args": ["-dynamic"]}}}`)
	f := r.host.Connect(context.Background(), srcs, nil)
	t.Cleanup(func() { _ = f.Close() })
	bg := context.Background()
	extra := catalog.ToolName("example", "extra")
	_, err := f.CallServerTool(bg, "example", "tool_add", json.RawMessage(`{"name":"extra","field":"a"}`))
	require.NoError(t, err)
	g := awaitGen(t, f, "the added tool", func(g Generation) bool { _, ok := g.Set.Tool(extra); return ok })
	held, _ := g.Set.Tool(extra)
	before := pids(bin)
	require.Len(t, before, 1)

	other := make(chan error, 1)
	go func() {
		_, err := f.CallServerTool(bg, "example", "slow", json.RawMessage(`{"ms":10000}`))
		other <- err
	}()
	ctx, cancel := context.WithTimeout(bg, 300*time.Millisecond)
	defer cancel()
	_, err = f.CallServerTool(ctx, "example", "slow", json.RawMessage(`{"ms":10000}`))
	assert.Equal(t, refusal.Transient, refusal.ClassOf(err))
	assert.Equal(t, supervisor.ReasonTimeout, refusal.ReasonOf(err))
	select {
	case err := <-other:
		assert.Equal(t, refusal.Transient, refusal.ClassOf(err), "the other call in flight: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the other call in flight did not end with the process")
	}
	assert.Eventually(t, func() bool { return !alive(bin, before[0]) }, 5*time.Second, 10*time.Millisecond, "the process was ended")

	awaitGen(t, f, "the new process's catalog", func(g Generation) bool {
		_, ok := g.Set.Tool(extra)
		return result(t, f, "example").State == StateConnected && !ok
	})
	after := pids(bin)
	require.Len(t, after, 1)
	assert.NotEqual(t, before[0], after[0], "a new process")
	_, err = held.Call(bg, json.RawMessage(`{"a":"x"}`))
	assert.Equal(t, catalog.ReasonToolRemoved, refusal.ReasonOf(err), "the old process's tool is gone")
	res, err := f.CallServerTool(bg, "example", "echo", json.RawMessage(`{"text":"back"}`))
	require.NoError(t, err)
	assert.Equal(t, "back", text(t, res))
}
