package mcpsession

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// contentPeer answers prompts/get, resources/read, subscriptions and
// completion.
func contentPeer(caps map[string]any) *memPeer {
	return &memPeer{version: PinnedProtocolVersion, caps: caps, handle: func(method string, params json.RawMessage) (json.RawMessage, *jsonrpc.Error) {
		switch method {
		case "prompts/get":
			var p struct{ Name string }
			_ = json.Unmarshal(params, &p)
			if p.Name != "greet" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown prompt " + p.Name + " (arguments " + string(params) + ")"}
			}
			return json.RawMessage(`{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`), nil
		case "resources/read":
			return json.RawMessage(`{"contents":[{"uri":"test://a","mimeType":"text/plain","text":"body"},{"uri":"test://b","blob":"AAEC"}]}`), nil
		case "resources/subscribe", "resources/unsubscribe":
			return json.RawMessage(`{}`), nil
		case "completion/complete":
			return json.RawMessage(`{"completion":{"values":["a","b"],"total":5,"hasMore":true}}`), nil
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no"}
	}}
}

var allCaps = map[string]any{"prompts": map[string]any{}, "resources": map[string]any{"subscribe": true}, "completions": map[string]any{}}

// updateRecorder collects ResourceUpdated calls.
type updateRecorder struct {
	mu   sync.Mutex
	uris []string
	ch   chan string
}

func (r *updateRecorder) signals() ports.Signals {
	r.ch = make(chan string, 64)
	return ports.Signals{ResourceUpdated: func(uri string) {
		r.mu.Lock()
		r.uris = append(r.uris, uri)
		r.mu.Unlock()
		select {
		case r.ch <- uri:
		default:
		}
	}}
}

func TestSessionContent(t *testing.T) {
	p := contentPeer(allCaps)
	rec := &updateRecorder{}
	ctx := context.Background()
	sess, err := New(fixedDialer(startMemPeer(t, p)), nil).Connect(ctx, target("srv"), rec.signals())
	require.NoError(t, err)
	defer sess.Close()
	id := sess.Identity()
	assert.True(t, id.Subscribe)
	assert.True(t, id.Completions)

	res, err := sess.GetPrompt(ctx, ports.GetPromptRequest{Name: "greet", Arguments: map[string]string{"k": "v"}})
	require.NoError(t, err)
	assert.Equal(t, "d", res.Description)
	require.Len(t, res.Messages, 1)
	assert.Equal(t, "user", res.Messages[0].Role)
	assert.JSONEq(t, `{"type":"text","text":"hi"}`, string(res.Messages[0].Content))
	assert.JSONEq(t, `{"name":"greet","arguments":{"k":"v"}}`, string(p.lastParams("prompts/get")))

	_, err = sess.GetPrompt(ctx, ports.GetPromptRequest{Name: "nope", Arguments: map[string]string{"k": canary}})
	re := requireReason(t, err, refusal.Protocol, "prompt_rejected")
	assert.NotContains(t, re.Error(), canary, "an argument value the server echoed is masked")
	assert.Contains(t, re.Detail, "invalid params: unknown prompt nope (arguments ", "the server's own message is kept")
	_, err = sess.GetPrompt(ctx, ports.GetPromptRequest{Name: "greet"})
	require.NoError(t, err, "the session stays usable after a rejected request")

	rr, err := sess.ReadResource(ctx, ports.ReadRequest{URI: "test://a"})
	require.NoError(t, err)
	assert.Equal(t, []ports.ResourceContents{
		{URI: "test://a", MIMEType: "text/plain", Text: "body"},
		{URI: "test://b", Blob: []byte{0, 1, 2}, IsBlob: true},
	}, rr.Contents)

	c, err := sess.Complete(ctx, ports.CompleteRequest{Ref: ports.CompletionRef{Type: ports.CompletionRefResource, Name: "test://{x}"}, Argument: "x", Value: "a", Context: map[string]string{"y": "1"}})
	require.NoError(t, err)
	assert.Equal(t, ports.Completion{Values: []string{"a", "b"}, Total: 5, HasMore: true}, c)
	assert.JSONEq(t, `{"ref":{"type":"ref/resource","uri":"test://{x}"},"argument":{"name":"x","value":"a"},"context":{"arguments":{"y":"1"}}}`, string(p.lastParams("completion/complete")))
	_, err = sess.Complete(ctx, ports.CompleteRequest{Ref: ports.CompletionRef{Type: "ref/other"}})
	requireReason(t, err, refusal.Config, "completion_ref_invalid")

	// Updates: only subscribed URIs are signalled.
	require.NoError(t, sess.Subscribe(ctx, "test://a"))
	require.NoError(t, p.conn.Write(ctx, &jsonrpc.Request{Method: "notifications/resources/updated", Params: json.RawMessage(`{"uri":"test://other"}`)}))
	require.NoError(t, p.conn.Write(ctx, &jsonrpc.Request{Method: "notifications/resources/updated", Params: json.RawMessage(`{"uri":"test://a"}`)}))
	select {
	case uri := <-rec.ch:
		assert.Equal(t, "test://a", uri)
	case <-time.After(10 * time.Second):
		t.Fatal("no update")
	}
	require.NoError(t, sess.Unsubscribe(ctx, "test://a"))
	assert.Equal(t, 1, p.count("resources/unsubscribe"))
	rec.mu.Lock()
	assert.Equal(t, []string{"test://a"}, rec.uris)
	rec.mu.Unlock()
}

func TestSessionContentUndeclared(t *testing.T) {
	p := contentPeer(map[string]any{"tools": map[string]any{}, "resources": map[string]any{}})
	ctx := context.Background()
	sess, err := New(fixedDialer(startMemPeer(t, p)), nil).Connect(ctx, target("srv"), ports.Signals{})
	require.NoError(t, err)
	defer sess.Close()
	_, err = sess.GetPrompt(ctx, ports.GetPromptRequest{Name: "greet"})
	requireReason(t, err, refusal.Unsupported, "capability_undeclared")
	err = sess.Subscribe(ctx, "test://a")
	requireReason(t, err, refusal.Unsupported, "capability_undeclared")
	_, err = sess.Complete(ctx, ports.CompleteRequest{Ref: ports.CompletionRef{Type: ports.CompletionRefPrompt, Name: "p"}})
	requireReason(t, err, refusal.Unsupported, "capability_undeclared")
	assert.Zero(t, p.count("prompts/get")+p.count("resources/subscribe")+p.count("completion/complete"))
	_, err = sess.ReadResource(ctx, ports.ReadRequest{URI: "test://a"})
	require.NoError(t, err, "resources are declared")
}

func TestGateLostUpdateSignalsAll(t *testing.T) {
	g := newInboundGate()
	require.True(t, g.admit(methodResourceUpdated, false))
	require.False(t, g.admit(methodResourceUpdated, false), "a second update waits behind the first")
	assert.True(t, g.lostUpdates.Load())
}

func requireReason(t *testing.T, err error, class refusal.Class, reason string) *refusal.Error {
	t.Helper()
	require.Error(t, err)
	var re *refusal.Error
	require.ErrorAs(t, err, &re)
	assert.Equal(t, class, re.Class, "class of %v", re)
	assert.Equal(t, reason, re.Reason)
	return re
}

func TestResourceUpdatedAfterGateDrop(t *testing.T) {
	var got []string
	s := newSession("srv", &Conn{}, ports.Signals{ResourceUpdated: func(uri string) { got = append(got, uri) }}, time.Second)
	defer s.cancel()
	s.ready.Store(true)
	s.gate = newInboundGate()
	s.subs.uris = map[string]bool{"test://a": true, "test://b": true}
	upd := func(uri string) *mcp.ResourceUpdatedNotificationRequest {
		return &mcp.ResourceUpdatedNotificationRequest{Params: &mcp.ResourceUpdatedNotificationParams{URI: uri}}
	}
	s.resourceUpdated(context.Background(), upd("test://a"))
	s.resourceUpdated(context.Background(), upd("test://zzz"))
	assert.Equal(t, []string{"test://a"}, got, "an unsubscribed URI is dropped")

	got = nil
	s.gate.lostUpdates.Store(true) // the gate dropped an update while this one waited
	s.resourceUpdated(context.Background(), upd("test://a"))
	assert.ElementsMatch(t, []string{"test://a", "test://b"}, got, "every subscribed URI may have changed")
	assert.False(t, s.gate.lostUpdates.Load())
}

// TestResourceUpdateStormIsBounded: while the host's ResourceUpdated
// callback is blocked, a server floods updates of two subscribed URIs
// (and of one it was never asked about). What the gate drops is not lost:
// each subscribed URI is signalled after the update that held the handler,
// the unsubscribed one never, and the session goes on. (The supervisor
// coalesces and paces what reaches the host; the list-change flood test
// shows the gate keeps the SDK's queue from growing.)
func TestResourceUpdateStormIsBounded(t *testing.T) {
	const storm = 10_000
	frozen := time.Now()
	gateClock = func() time.Time { return frozen }
	defer func() { gateClock = time.Now }()
	p := contentPeer(allCaps)
	conn := startMemPeer(t, p)
	ft := &filteringTransport{inner: conn.Transport}
	conn.Transport = ft
	conn.InboundFilter = ft.set
	release := make(chan struct{})
	var once sync.Once
	defer once.Do(func() { close(release) })
	var mu sync.Mutex
	var got []string
	first := make(chan struct{}, 1)
	s := connect(t, New(fixedDialer(conn), nil), ports.Signals{ResourceUpdated: func(uri string) {
		mu.Lock()
		got = append(got, uri)
		mu.Unlock()
		select {
		case first <- struct{}{}:
			<-release // the first signal holds the SDK's handler
		default:
		}
	}})
	ctx := context.Background()
	require.NoError(t, s.Subscribe(ctx, "test://a"))
	require.NoError(t, s.Subscribe(ctx, "test://b"))
	for i := range storm {
		uri := []string{"test://a", "test://b", "test://never"}[i%3]
		require.NoError(t, p.conn.Write(ctx, &jsonrpc.Request{Method: "notifications/resources/updated", Params: json.RawMessage(`{"uri":"` + uri + `"}`)}))
	}
	<-first
	once.Do(func() { close(release) })
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= 3
	}, 10*time.Second, time.Millisecond, "the updates dropped during the storm are signalled")
	_, err := s.ReadResource(ctx, ports.ReadRequest{URI: "test://a"})
	require.NoError(t, err, "the session goes on")
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d signals for %d updates", len(got), storm)
	assert.Subset(t, got[1:], []string{"test://a", "test://b"}, "each subscribed URI is signalled after the one that held the handler")
	assert.NotContains(t, got, "test://never")
}
