package composition

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
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

	g.flushAudit() // the outcomes are appended without waiting
	recs, err := r.audit.Records(context.Background())
	require.NoError(t, err)
	var calls []ports.AuditRecord
	for _, rec := range recs {
		if rec.Action == ports.AuditCall {
			calls = append(calls, rec)
		}
	}
	require.Len(t, calls, 4, "two records per forwarded call; an unknown name reaches no server")
	// On a log that is not a ports.AuditQueue the outcome of one call is
	// appended by a goroutine, so the next call's start may come first;
	// each call's start comes before its outcome.
	byCall := map[string][]ports.AuditRecord{}
	var order []string
	for _, rec := range calls {
		w := callWord(rec)
		require.NotEmpty(t, w)
		if byCall[w] == nil {
			order = append(order, w)
		}
		byCall[w] = append(byCall[w], rec)
		assert.Equal(t, "a", rec.Identity.ServerID)
		assert.Contains(t, rec.Reason, "tool=keep")
	}
	require.Len(t, order, 2, "the call word ties a call's two records")
	first, second := byCall[order[0]], byCall[order[1]]
	require.Len(t, first, 2)
	require.Len(t, second, 2)
	assert.Equal(t, "started", first[0].Outcome)
	assert.Equal(t, "ok", first[1].Outcome)
	assert.Contains(t, first[0].Reason, "args_bytes=26")
	assert.Contains(t, first[1].Reason, "args_bytes=26")
	assert.Equal(t, "started", second[0].Outcome)
	assert.Equal(t, "refused", second[1].Outcome)
	assert.Contains(t, second[1].Reason, "reason=invalid_arguments")
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

// callWord returns the call=ID word of a call record's Reason.
func callWord(r ports.AuditRecord) string {
	for w := range strings.FieldsSeq(r.Reason) {
		if strings.HasPrefix(w, "call=") {
			return w
		}
	}
	return ""
}

// crashAudit is an audit log that says what would survive a crash at any
// moment: durable holds what Append returned and what Flush wrote; queued
// what Enqueue took since (lost in a crash). While gate is open (not
// closed) an Append of a call record waits for it, as a slow fsync would.
type crashAudit struct {
	mu              sync.Mutex
	durable, queued []ports.AuditRecord
	gate            chan struct{}
}

func (a *crashAudit) Append(ctx context.Context, r ports.AuditRecord) error {
	if r.Action == ports.AuditCall && a.gate != nil {
		select {
		case <-a.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.durable = append(a.durable, r)
	return nil
}

func (a *crashAudit) Enqueue(r ports.AuditRecord) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.queued = append(a.queued, r)
	return nil
}

func (a *crashAudit) Flush(context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.durable = append(a.durable, a.queued...)
	a.queued = nil
	return nil
}

func (a *crashAudit) Records(context.Context) ([]ports.AuditRecord, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.durable), nil
}

// crash returns the call records that would survive a crash now.
func (a *crashAudit) crash() []ports.AuditRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(a.durable), func(r ports.AuditRecord) bool { return r.Action != ports.AuditCall })
}

// TestGatewayCallAuditCrashPoints crashes (takes what is durable) at each
// point of a forwarded call: while its start record is being made
// durable the call is already forwarded (the fsync overlaps the upstream
// round trip) but its result is not returned, and nothing of it survives;
// once the result is returned its start record survives and its outcome
// may not; after Close both do, in that order.
func TestGatewayCallAuditCrashPoints(t *testing.T) {
	al := &crashAudit{gate: make(chan struct{})}
	c := newLiveConnector()
	c.set("a", tool("keep", "string", "x"))
	h, err := Custom(Ports{
		Approvals: portstest.NewApprovalStore(),
		Audit:     al,
		Trust:     portstest.NewWorkspaceTrust(ports.WorkspaceFacts{Repository: "https://example.com/r.git", Generation: "g1"}),
	}, Config{})
	require.NoError(t, err)
	f := h.Connect(t.Context(), liveSrcs("a"), &ConnectOptions{connector: c, Supervisor: fastSupervisor})
	defer f.Close()
	g := f.Gateway(nil)
	closed := false
	defer func() {
		if !closed {
			g.Close()
		}
	}()
	require.NoError(t, f.Wait(t.Context()))

	returned := make(chan error, 1)
	go func() {
		_, err := gatewayBackend{g}.CallTool(context.Background(), "mcp__a__keep", json.RawMessage(`{"x":"v"}`))
		returned <- err
	}()
	require.Eventually(t, func() bool {
		for _, s := range c.Sessions() {
			if len(s.CallRequests()) > 0 {
				return true
			}
		}
		return false
	}, 10*time.Second, time.Millisecond, "the call is forwarded while its start record is not yet durable")
	select {
	case <-returned:
		t.Fatal("the result was returned before the call's start record was durable")
	case <-time.After(50 * time.Millisecond):
	}
	assert.Empty(t, al.crash(), "a crash now: the client was told nothing, and no record of the call survives")

	close(al.gate)
	require.NoError(t, <-returned)
	survive := al.crash()
	require.Len(t, survive, 1, "a crash once the result is returned: the start record survives")
	assert.Equal(t, "started", survive[0].Outcome)
	assert.Contains(t, survive[0].Reason, "tool=keep")
	assert.Contains(t, survive[0].Reason, "args_bytes=9")

	g.Close()
	closed = true
	survive = al.crash()
	require.Len(t, survive, 2, "after Close the outcome survives too")
	assert.Equal(t, "ok", survive[1].Outcome)
	assert.Equal(t, callWord(survive[0]), callWord(survive[1]))
	assert.NotEmpty(t, callWord(survive[0]))
}

// TestOutcomeFacts: the outcome record's facts are the words they were
// when fmt wrote them.
func TestOutcomeFacts(t *testing.T) {
	for _, c := range []struct {
		id, tool  string
		ms        int64
		args, res int
		reason    string
	}{{"ab12cd34.1", "echo", 0, 26, 40, ""}, {"x.99", "t ool", 12345, 0, 0, "server_unavailable"}, {"", "", -1, -2, 3, "error"}} {
		want := fmt.Sprintf("call=%s tool=%s ms=%d args_bytes=%d result_bytes=%d", c.id, c.tool, c.ms, c.args, c.res)
		if c.reason != "" {
			want += " reason=" + c.reason
		}
		assert.Equal(t, want, outcomeFacts(c.id, c.tool, c.ms, c.args, c.res, c.reason))
	}
}
