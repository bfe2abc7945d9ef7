package composition

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// The definition's tool filters and the managed policy's denied tools
// reach the catalog: filtered and denied tools are in the rejected bucket
// with their reason, never in the Fleet's tool set, and cannot be called.
// A server the managed policy denies is refused by name and never started.
func TestConnectAppliesToolFiltersAndPolicy(t *testing.T) {
	bin := privateExample(t)
	r := newRig(t, Config{Authority: NewRootAuthority(t.TempDir(), nil)})
	b, _ := json.Marshal(bin)
	srcs := []definition.Source{
		{Tier: ports.TierManaged, Origin: "/etc/mcpward/managed.json", Data: []byte(`{
		  "deniedMcpServers": [{"serverName": "denied"}],
		  "deniedTools": ["example/add"]}`)},
		{Tier: ports.TierUser, Origin: "/home/u/mcp.json", Data: []byte(`{"mcpServers": {
		  "example": {"command": ` + string(b) + `, "includeTools": ["echo", "add"]},
		  "denied": {"command": ` + string(b) + `}}}`)},
	}
	f := r.host.Connect(context.Background(), srcs, nil)
	t.Cleanup(func() { _ = f.Close() })

	den := result(t, f, "denied")
	assert.Equal(t, StateRefused, den.State)
	assert.Equal(t, definition.ReasonPolicyDenied, den.Reason)

	ex := result(t, f, "example")
	require.Equal(t, StateConnected, ex.State, "class %v reason %s", ex.Class, ex.Reason)
	assert.Equal(t, []string{"mcp__example__echo"}, toolNames(ex))
	assert.Contains(t, ex.Rejected, catalog.Rejected{Server: "example", Kind: ports.ListTools, Name: "add", Reason: catalog.ReasonPolicyDenied})
	var filtered int
	for _, rej := range ex.Rejected {
		if rej.Reason == catalog.ReasonToolFiltered {
			filtered++
			_, ok := f.Set().Tool(catalog.ToolName("example", rej.Name))
			assert.False(t, ok, "filtered tool %s reached the set", rej.Name)
		}
	}
	assert.Positive(t, filtered, "the example server has tools besides echo and add")
	_, ok := f.Set().Tool("mcp__example__add")
	assert.False(t, ok)
	_, err := f.CallServerTool(context.Background(), "example", "add", json.RawMessage(`{"a":1,"b":2}`))
	assert.Equal(t, ReasonUnknownTool, refusal.ReasonOf(err))
	_, err = f.CallServerTool(context.Background(), "example", "echo", json.RawMessage(`{"text":"x"}`))
	assert.NoError(t, err)
}

// Evaluate says at list time what connecting would refuse: egress and URL
// shape for http (the state), the program on the child's PATH for stdio
// (Launch, beside the state: approving stays possible).
func TestEvaluateAdmitsWithoutConnecting(t *testing.T) {
	dir := t.TempDir()
	r := newRig(t, Config{Authority: NewRootAuthority(dir, map[string]string{"PATH": dir})})
	ev := r.host.Evaluate(context.Background(), userSrc(`{"mcpServers": {
	  "plain-http": {"url": "http://example.com/mcp"},
	  "file-url": {"url": "file:///etc/passwd"},
	  "not-on-path": {"command": "go"}}}`))
	want := map[string][3]string{
		"plain-http":  {string(StateRefused), "http_not_loopback", ""},
		"file-url":    {string(StateUnresolved), "url_invalid", ""},
		"not-on-path": {string(StateAllowed), "host_trusted_tier", "program_not_found"},
	}
	for name, w := range want {
		res, ok := ev.Server(name)
		require.True(t, ok, name)
		assert.Equal(t, w, [3]string{string(res.State), res.Reason, res.Launch}, name)
	}
	assert.Zero(t, r.dials.n.Load(), "nothing was dialled")
}
