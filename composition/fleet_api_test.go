package composition

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/activation"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/supervisor"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// requireRefusal checks err's class, reason and server.
func requireRefusal(t *testing.T, err error, class refusal.Class, reason, server string) *refusal.Error {
	t.Helper()
	var e *refusal.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, class, e.Class, "class of %v", err)
	assert.Equal(t, reason, e.Reason, "reason of %v", err)
	assert.Equal(t, server, e.Server, "server of %v", err)
	return e
}

// TestFleetClosedRefusesByName: after Close, every tool held from any
// generation, CallHostTool, CallServerTool and the prompt and resource
// methods refuse with Class Config, ReasonFleetClosed, naming the server
// where there is one: the host closed it, it is no bug of mcpward.
func TestFleetClosedRefusesByName(t *testing.T) {
	c := newLiveConnector()
	c.set("a", tool("t", "string"))
	c.set("b", tool("u", "string"))
	r := newRig(t, Config{})
	f := r.host.Connect(context.Background(), liveSrcs("a", "b"), &ConnectOptions{connector: c})
	g := f.Current()
	ta, tb := hostTool(t, g.Set, "a", "t"), hostTool(t, g.Set, "b", "u")
	_, err := ta.Call(context.Background(), nil)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	ctx := context.Background()
	_, err = ta.Call(ctx, nil)
	requireRefusal(t, err, refusal.Config, ReasonFleetClosed, "a")
	_, err = tb.Call(ctx, json.RawMessage(`{}`))
	requireRefusal(t, err, refusal.Config, ReasonFleetClosed, "b")
	_, err = f.CallHostTool(ctx, ToolName("a", "t"), nil)
	requireRefusal(t, err, refusal.Config, ReasonFleetClosed, "")
	_, err = f.CallServerTool(ctx, "a", "t", nil)
	requireRefusal(t, err, refusal.Config, ReasonFleetClosed, "a")
	_, err = f.GetPrompt(ctx, "b", "p", nil)
	requireRefusal(t, err, refusal.Config, ReasonFleetClosed, "b")
	_, err = f.ReadResource(ctx, "b", "file:///x")
	requireRefusal(t, err, refusal.Config, ReasonFleetClosed, "b")
	for _, s := range f.Servers() {
		assert.Equal(t, StateClosed, s.State)
		assert.Equal(t, refusal.None, s.Class, "a closed server has no failure")
	}
}

// TestOnStatusNoFailureAtClose: a failed server's failure reaches OnStatus
// once; Close reports the server Closed without it.
func TestOnStatusNoFailureAtClose(t *testing.T) {
	c := newLiveConnector()
	c.Fail("Connect", refusal.New(refusal.Refused, "egress_refused", "a"))
	var mu sync.Mutex
	var seen []supervisor.Status
	r := newRig(t, Config{})
	f := r.host.Connect(context.Background(), liveSrcs("a"), &ConnectOptions{connector: c, Supervisor: fastSupervisor,
		OnStatus: func(_ string, st supervisor.Status) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, st)
		}})
	require.Equal(t, StateFailed, result(t, f, "a").State)
	require.NoError(t, f.Close())
	mu.Lock()
	defer mu.Unlock()
	failures := 0
	for _, st := range seen {
		if st.Err != nil && st.Err.Reason == "egress_refused" {
			failures++
		}
	}
	assert.Equal(t, 1, failures, "the failure is reported once: %v", seen)
	last := seen[len(seen)-1]
	assert.Equal(t, supervisor.Closed, last.State)
	assert.Nil(t, last.Err, "Close is not a failure")
}

// TestFailedServerToolsUnavailable: a tool whose server is not connected
// fails server_unavailable naming the server, in the class of its
// failure, whether the model names it by a tool of an older generation,
// by its host-facing name (even a server that never had a catalog) or by
// (server, tool); unknown_tool names the server when it is connected, and
// none when no server owns the name.
func TestFailedServerToolsUnavailable(t *testing.T) {
	c := newLiveConnector()
	c.set("a", tool("t", "string"))
	c.set("c", tool("v", "string"))
	c.SetScript("b", portstest.SessionScript{OnConnect: func(context.Context, ports.Target) error {
		return refusal.New(refusal.Refused, "egress_refused", "b")
	}})
	r := newRig(t, Config{})
	f := r.host.Connect(context.Background(), liveSrcs("a", "b", "c"), &ConnectOptions{connector: c, Supervisor: fastSupervisor})
	t.Cleanup(func() { _ = f.Close() })
	ctx := context.Background()
	ta := hostTool(t, f.Current().Set, "a", "t")

	// b failed at its first connect: it never had a catalog.
	require.Equal(t, StateFailed, result(t, f, "b").State)
	_, err := f.CallHostTool(ctx, ToolName("b", "u"), nil)
	e := requireRefusal(t, err, refusal.Refused, ReasonServerUnavailable, "b")
	assert.Equal(t, "the server is failed (egress_refused)", e.Detail)
	_, err = f.CallServerTool(ctx, "b", "u", nil)
	requireRefusal(t, err, refusal.Refused, ReasonServerUnavailable, "b")
	_, err = f.ServerCatalog("b")
	requireRefusal(t, err, refusal.Refused, ReasonServerUnavailable, "b")

	// a fails after it was connected: its catalog stays, stale, and its
	// tools say the server is unavailable.
	c.Fail("Connect", refusal.New(refusal.AuthRequired, ReasonSignInRequired, "a"))
	for _, sess := range c.Sessions() {
		if sess.Target().ServerID == "a" {
			sess.Disconnect()
		}
	}
	awaitGen(t, f, "a failed", func(Generation) bool { return result(t, f, "a").State == StateFailed })
	assert.True(t, result(t, f, "a").NeedsSignIn())
	_, err = ta.Call(ctx, nil)
	requireRefusal(t, err, refusal.AuthRequired, ReasonServerUnavailable, "a")
	_, err = f.CallHostTool(ctx, ToolName("a", "t"), nil)
	requireRefusal(t, err, refusal.AuthRequired, ReasonServerUnavailable, "a")
	c.Clear()

	// A connected server lacking the tool, and a name nobody owns.
	_, err = f.CallHostTool(ctx, ToolName("c", "nope"), nil)
	requireRefusal(t, err, refusal.Config, ReasonUnknownTool, "c")
	_, err = f.CallHostTool(ctx, ToolName("zzz", "v"), nil)
	requireRefusal(t, err, refusal.Config, ReasonUnknownTool, "")
	_, err = f.CallHostTool(ctx, "v", nil)
	requireRefusal(t, err, refusal.Config, ReasonUnknownTool, "")
	_, err = f.CallServerTool(ctx, "c", "nope", nil)
	requireRefusal(t, err, refusal.Config, ReasonUnknownTool, "c")
	_, err = f.CallHostTool(ctx, ToolName("c", "v"), nil)
	require.NoError(t, err)
}

// TestEvaluationPredicates: the predicates answer a host's questions
// from the state, reason and error, not from reason words it compares.
func TestEvaluationPredicates(t *testing.T) {
	denied := func(reason string) ServerEvaluation { return ServerEvaluation{State: StateDenied, Reason: reason} }
	tests := []struct {
		name                                    string
		r                                       ServerEvaluation
		approval, changed, trustedWS, variables bool
	}{
		{"allowed", ServerEvaluation{State: StateAllowed, Reason: activation.ReasonApproved}, false, false, false, false},
		{"not approved", denied(activation.ReasonNotApproved), true, false, false, false},
		{"approval changed", denied(activation.ReasonIdentityChanged), true, true, false, false},
		{"workspace untrusted", denied(activation.ReasonWorkspaceUntrusted), false, false, true, false},
		{"repository unknown", denied(activation.ReasonRepositoryUnknown), false, false, false, false},
		{"decision failed", ServerEvaluation{State: StateDenied, Reason: activation.ReasonNotApproved, Err: refusal.New(refusal.Transient, "x", "")}, false, false, false, false},
		{"unset variables", ServerEvaluation{State: StateUnresolved, Reason: definition.ReasonUnsetVariable, Missing: []string{"TOKEN"}}, false, false, false, true},
		{"refused", ServerEvaluation{State: StateRefused, Reason: activation.ReasonNotApproved}, false, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.approval, tt.r.NeedsApproval(), "NeedsApproval")
			assert.Equal(t, tt.changed, tt.r.ApprovalChanged(), "ApprovalChanged")
			assert.Equal(t, tt.trustedWS, tt.r.NeedsTrustedWorkspace(), "NeedsTrustedWorkspace")
			assert.Equal(t, tt.variables, tt.r.NeedsVariables(), "NeedsVariables")
		})
	}
}

// TestApproveWithStaticTrust: with a production workspace trust, a project
// server needs an approval (NeedsApproval), gets one, and needs it again
// once its definition changed (ApprovalChanged); without a trust no
// approval can be bound.
func TestApproveWithStaticTrust(t *testing.T) {
	ctx := context.Background()
	project := func(url string) []definition.Source {
		return []definition.Source{{Tier: ports.TierProject, Origin: ".mcp.json", Data: []byte(`{"mcpServers": {"notes": {"type": "http", "url": "` + url + `"}}}`)}}
	}
	h, err := Custom(Ports{Approvals: portstest.NewApprovalStore(), Audit: portstest.NewAuditLog(),
		Trust: StaticTrust(WorkspaceFacts{Repository: "https://github.com/acme/w.git"})}, Config{})
	require.NoError(t, err)
	r, _ := h.Evaluate(ctx, project("https://notes.example/mcp")).Server("notes")
	require.True(t, r.NeedsApproval(), "%s %s", r.State, r.Reason)
	assert.False(t, r.ApprovalChanged())
	_, err = h.Approve(ctx, project("https://notes.example/mcp"), "notes")
	require.NoError(t, err)
	r, _ = h.Evaluate(ctx, project("https://notes.example/mcp")).Server("notes")
	assert.True(t, r.Usable())
	assert.False(t, r.NeedsApproval())
	r, _ = h.Evaluate(ctx, project("https://notes.example/v2/mcp")).Server("notes")
	assert.True(t, r.NeedsApproval())
	assert.True(t, r.ApprovalChanged())
	assert.NotEmpty(t, r.Mismatch)

	untrusted, err := Custom(Ports{Approvals: portstest.NewApprovalStore(), Audit: portstest.NewAuditLog()}, Config{})
	require.NoError(t, err)
	r, _ = untrusted.Evaluate(ctx, project("https://notes.example/mcp")).Server("notes")
	assert.False(t, r.NeedsApproval(), "no approval can be bound to an unknown repository")
	assert.Equal(t, ReasonRepositoryUnknown, r.Reason)
	_, err = untrusted.Approve(ctx, project("https://notes.example/mcp"), "notes")
	assert.Equal(t, ReasonRepositoryUnknown, ReasonOf(err))
}
