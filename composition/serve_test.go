package composition

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// gatewayRig is a Fleet of servers a (tools keep, other) and b (tool
// keep) on fake sessions, and a Gateway of it.
func gatewayRig(t *testing.T, opts *GatewayOptions) (*rig, *Gateway) {
	t.Helper()
	c := newLiveConnector()
	c.set("a", tool("keep", "string", "x"), tool("other", "string"))
	c.set("b", tool("keep", "string"))
	r := newRig(t, Config{})
	f := r.host.Connect(context.Background(), liveSrcs("a", "b"), &ConnectOptions{connector: c, Supervisor: fastSupervisor})
	g := f.Gateway(opts)
	t.Cleanup(func() { g.Close(); _ = f.Close() })
	return r, g
}

func offered(b gatewayBackend) []string {
	var names []string
	for _, tl := range b.Catalog().Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

func TestGatewayOffersHostNamesAndStatus(t *testing.T) {
	r, g := gatewayRig(t, nil)
	b := gatewayBackend{g}
	assert.Equal(t, []string{"mcp__a__keep", "mcp__a__other", "mcp__b__keep", StatusToolName}, offered(b))
	assert.Equal(t, offered(b), g.ToolNames(), "what the SDK server registered")

	_, err := b.CallTool(context.Background(), "mcp__a__keep", json.RawMessage(`{"x":"the-argument-value"}`))
	require.NoError(t, err)
	_, err = b.CallTool(context.Background(), "mcp__a__keep", json.RawMessage(`{"x":7}`))
	assert.Equal(t, refusal.Config, refusal.ClassOf(err), "validated before anything is sent")
	_, err = b.CallTool(context.Background(), "mcp__nope", json.RawMessage(`{}`))
	assert.Equal(t, ReasonUnknownTool, refusal.ReasonOf(err))

	recs, err := r.audit.Records(context.Background())
	require.NoError(t, err)
	var calls []ports.AuditRecord
	for _, rec := range recs {
		if rec.Action == ports.AuditCall {
			calls = append(calls, rec)
		}
	}
	require.Len(t, calls, 2, "one record per forwarded call; an unknown name reaches no server")
	assert.Equal(t, "a", calls[0].Identity.ServerID)
	assert.Equal(t, "ok", calls[0].Outcome)
	assert.Contains(t, calls[0].Reason, "tool=keep")
	assert.Contains(t, calls[0].Reason, "args_bytes=26")
	assert.Equal(t, "refused", calls[1].Outcome)
	assert.Contains(t, calls[1].Reason, "reason=invalid_arguments")
	for _, rec := range calls {
		assert.NotContains(t, rec.Reason, "the-argument-value")
	}

	st, err := b.CallTool(context.Background(), StatusToolName, json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.Contains(t, string(st.Content), "a: connected")
	assert.Contains(t, string(st.Content), "b: connected")
}

func TestGatewayOfOneServer(t *testing.T) {
	_, g := gatewayRig(t, &GatewayOptions{Server: "b"})
	b := gatewayBackend{g}
	assert.Equal(t, []string{"keep", StatusToolName}, offered(b))
	_, err := b.CallTool(context.Background(), "keep", json.RawMessage(`{}`))
	require.NoError(t, err)
	st, err := b.CallTool(context.Background(), StatusToolName, json.RawMessage(`{}`))
	require.NoError(t, err)
	assert.False(t, strings.Contains(string(st.Content), "a: "), "only b's line")
}

func TestTemplatePrefix(t *testing.T) {
	for _, c := range []struct{ tpl, want string }{
		{"file:///logs/{name}", "file:///logs/"},
		{"https://api.example.com/users/{id}", "https://api.example.com/users/"},
		{"https://{host}/x", ""},
		{"{+url}", ""},
		{"test://static/resource/{id}", "test://static/resource/"},
		{"weird:{x}", ""},
		{"https://example.com", ""},
	} {
		assert.Equal(t, c.want, templatePrefix(c.tpl), c.tpl)
	}
}

func TestStatusLine(t *testing.T) {
	assert.Equal(t, "a: connected", StatusLine(ServerStatus{Name: "a", State: StateConnected}))
	assert.Equal(t, "a: failed (transient spawn_failed)", StatusLine(ServerStatus{Name: "a", State: StateFailed, Class: refusal.Transient, Reason: "spawn_failed"}))
	assert.Equal(t, "a: denied (policy_denied)", StatusLine(ServerStatus{Name: "a", State: "denied", Class: refusal.None, Reason: "policy_denied"}))
}

// TestAnnotationsJSON: a tool's hints reach the downstream client in the
// protocol's shape, an absent hint stays absent, and no annotations stay
// none.
func TestAnnotationsJSON(t *testing.T) {
	yes, no := true, false
	assert.Nil(t, annotationsJSON(nil))
	got := annotationsJSON(&ports.ToolAnnotations{Title: "Delete", DestructiveHint: &yes, ReadOnlyHint: &no})
	assert.JSONEq(t, `{"title":"Delete","destructiveHint":true,"readOnlyHint":false}`, string(got))
	assert.JSONEq(t, `{}`, string(annotationsJSON(&ports.ToolAnnotations{})))
}
