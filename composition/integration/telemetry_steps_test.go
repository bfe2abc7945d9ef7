package integration_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/memory"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/supervisor"
	"github.com/mcpward/mcpward/ports"
)

// spansNamed returns the ended spans named name.
func spansNamed(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// TestTelemetrySteps: mcpward's own steps are INTERNAL spans under the
// host's context: one mcpward.evaluate per server decision (its state and
// reason word, nothing else), a mcpward.connect per attempt that is the
// parent of the handshake's client span, and a mcpward.discovery that is
// the parent of every "{kind}/list" client span of the discovery; a
// failing connect carries error.type and an Error status; the failing
// server's argument and environment value (a fresh canary) are in none of
// it.
func TestTelemetrySteps(t *testing.T) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	canary := "canary" + hex.EncodeToString(b[:])
	p := newTelPeer(t, "s")
	rec := newRecorders(t)
	h, cleanup, err := memory.Open(context.Background(), memory.Config{Config: composition.Config{
		TracerProvider: rec.tp, MeterProvider: rec.mp}})
	require.NoError(t, err)
	t.Cleanup(cleanup)
	srcs := []definition.Source{
		{Tier: ports.TierUser, Origin: "/home/u/mcp.json", Data: []byte(`{"mcpServers": {
			"tel": {"type": "http", "url": "` + p.URL + `/mcp"},
			"gone": {"command": "/nonexistent/mcpward-telemetry-test", "args": ["--token=` + canary + `arg"],
				"env": {"TOKEN": "` + canary + `env"}}}}`)},
		{Tier: ports.TierProject, Origin: "/w/.mcp.json", Data: []byte(`{"mcpServers": {
			"proj": {"command": "/bin/true"}}}`)},
	}
	ctx, root := rec.tp.Tracer("host").Start(context.Background(), "host.connect")
	f := h.Connect(ctx, srcs, &composition.ConnectOptions{Supervisor: &supervisor.Options{MaxAttempts: 1}})
	root.End()
	t.Cleanup(func() { _ = f.Close() })
	states := map[string]composition.State{}
	for _, s := range f.Servers() {
		states[s.Name] = s.State
	}
	require.Equal(t, composition.StateConnected, states["tel"])
	_, err = f.CallServerTool(context.Background(), "tel", "echo", json.RawMessage(`{"text":"x"}`))
	require.NoError(t, err)
	spans := rec.spans.Ended()

	// evaluate: one span per server, children of the host's span, with
	// the decision's state and reason word as their only attributes.
	evals := spansNamed(spans, composition.SpanEvaluate)
	require.Len(t, evals, 3, "one per server")
	byState := map[string]string{}
	for _, e := range evals {
		assert.Equal(t, trace.SpanKindInternal, e.SpanKind())
		assert.Equal(t, root.SpanContext().SpanID(), e.Parent().SpanID(), "under the host's span")
		a := attrMap(e.Attributes())
		for k := range a {
			assert.Contains(t, []string{composition.AttrDecisionState, composition.AttrDecisionReason}, k)
		}
		byState[a[composition.AttrDecisionState]] = a[composition.AttrDecisionReason]
	}
	require.Contains(t, byState, "allowed")
	require.Contains(t, byState, "denied", "the unapproved project server")
	assert.NotEmpty(t, byState["denied"], "a denial says its reason word")

	// connect: the parent of the handshake's client span, under the
	// host's span (a foreground connect runs under the caller's context).
	var okConn, failConn sdktrace.ReadOnlySpan
	for _, c := range spansNamed(spans, composition.SpanConnect) {
		assert.Equal(t, trace.SpanKindInternal, c.SpanKind())
		assert.Equal(t, root.SpanContext().TraceID(), c.SpanContext().TraceID())
		if c.Status().Code == codes.Error {
			failConn = c
		} else {
			okConn = c
		}
	}
	require.NotNil(t, okConn, "a connect span for tel")
	version := f.Servers()[0].ProtocolVersion
	for _, s := range f.Servers() {
		if s.Name == "tel" {
			version = s.ProtocolVersion
		}
	}
	handshake := "initialize"
	if composition.ProtocolEra(version) == "modern" {
		handshake = "server/discover"
	}
	// The failed attempt made a handshake span too (under failConn).
	hsParents := map[trace.SpanID]bool{}
	for _, hs := range spansNamed(spans, handshake) {
		hsParents[hs.Parent().SpanID()] = true
	}
	assert.True(t, hsParents[okConn.SpanContext().SpanID()], "the handshake is a child of the connect step")
	require.NotNil(t, failConn, "a connect span for the missing program")
	assert.NotEmpty(t, attrMap(failConn.Attributes())["error.type"])
	assert.Equal(t, attrMap(failConn.Attributes())["error.type"], failConn.Status().Description)

	// discovery: the parent of the lists; the call is not under it.
	disc := spansNamed(spans, composition.SpanDiscovery)
	require.Len(t, disc, 1, "the one connected server's discovery")
	assert.Equal(t, trace.SpanKindInternal, disc[0].SpanKind())
	assert.Equal(t, root.SpanContext().TraceID(), disc[0].SpanContext().TraceID())
	lists := spansNamed(spans, "tools/list")
	require.NotEmpty(t, lists)
	for _, l := range lists {
		assert.Equal(t, disc[0].SpanContext().SpanID(), l.Parent().SpanID(), "tools/list is a child of the discovery step")
	}
	call := span(t, spans, "tools/call echo")
	assert.NotEqual(t, disc[0].SpanContext().TraceID(), call.SpanContext().TraceID(), "the call has its own trace")

	// The stdio server's argument and environment value are in no span.
	out := telemetryText(t, rec)
	require.Contains(t, out, composition.SpanConnect, "the walk saw the steps")
	assert.False(t, strings.Contains(out, canary), "an argument or environment value reached the telemetry")
}

// TestTelemetryApproveSpans: Host.Approve is a mcpward.approve span and
// Host.Revoke and RevokeAll mcpward.revoke spans, INTERNAL, under the
// caller's context, with no attribute but error.type when refused; the
// definition's argument and environment value (a canary) are in none.
func TestTelemetryApproveSpans(t *testing.T) {
	rec := newRecorders(t)
	ctx := context.Background()
	h, cleanup, err := memory.Open(ctx, memory.Config{
		Trust:  composition.StaticTrust(ports.WorkspaceFacts{Trusted: true, Repository: "https://example.com/r"}),
		Config: composition.Config{TracerProvider: rec.tp}})
	require.NoError(t, err)
	t.Cleanup(cleanup)
	srcs := []definition.Source{{Tier: ports.TierProject, Origin: "/w/.mcp.json", Data: []byte(`{"mcpServers": {
		"proj": {"command": "/bin/true", "args": ["cnryapprovearg"], "env": {"K": "cnryapproveenv"}}}}`)}}

	rctx, root := rec.tp.Tracer("test").Start(ctx, "host")
	_, err = h.Approve(rctx, srcs, "proj")
	require.NoError(t, err)
	_, nope := h.Approve(rctx, srcs, "nope")
	require.Error(t, nope)
	require.NoError(t, h.Revoke(rctx, srcs, "proj"))
	_, err = h.RevokeAll(rctx, "proj")
	require.NoError(t, err)
	root.End()

	spans := rec.spans.Ended()
	approves, revokes := spansNamed(spans, composition.SpanApprove), spansNamed(spans, composition.SpanRevoke)
	require.Len(t, approves, 2)
	require.Len(t, revokes, 2)
	for _, s := range append(approves, revokes...) {
		assert.Equal(t, trace.SpanKindInternal, s.SpanKind())
		assert.Equal(t, root.SpanContext().SpanID(), s.Parent().SpanID())
	}
	assert.Empty(t, approves[0].Attributes())
	assert.Equal(t, map[string]string{"error.type": composition.ReasonOf(nope)}, attrMap(approves[1].Attributes()))
	assert.Equal(t, codes.Error, approves[1].Status().Code)
	assert.Empty(t, revokes[0].Attributes())
	assert.Empty(t, revokes[1].Attributes())
	var seen strings.Builder
	for _, s := range spans {
		seen.WriteString(s.Name() + s.Status().Description)
		for _, kv := range s.Attributes() {
			seen.WriteString(string(kv.Key) + kv.Value.Emit())
		}
	}
	assert.False(t, strings.Contains(seen.String(), "cnryapprove"))
}
