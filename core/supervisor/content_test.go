package supervisor

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// contentScript is a script of a server declaring prompts, resources
// (with subscribe) and completions.
func contentScript() portstest.SessionScript {
	sc := script("1", "a")
	sc.Identity.Declared = append(sc.Identity.Declared, ports.ListPrompts, ports.ListResources, ports.ListResourceTemplates)
	sc.Identity.Subscribe = true
	sc.Identity.Completions = true
	sc.Pages[ports.ListPrompts] = map[string]ports.Page{"": {Items: []json.RawMessage{json.RawMessage(`{"name":"p","arguments":[{"name":"x","required":true}]}`)}}}
	sc.Pages[ports.ListResources] = map[string]ports.Page{"": {Items: []json.RawMessage{json.RawMessage(`{"uri":"test://r/1"}`)}}}
	sc.Content = portstest.ContentScript{
		GetPrompt: func(_ context.Context, r ports.GetPromptRequest) (ports.PromptResult, error) {
			return ports.PromptResult{Messages: []ports.PromptMessage{{Role: "user", Content: json.RawMessage(`{"type":"text","text":"` + r.Arguments["x"] + `"}`)}}}, nil
		},
		ReadResource: func(_ context.Context, r ports.ReadRequest) (ports.ReadResult, error) {
			return ports.ReadResult{Contents: []ports.ResourceContents{{URI: r.URI, Text: "body"}}}, nil
		},
		Complete: func(context.Context, ports.CompleteRequest) (ports.Completion, error) {
			return ports.Completion{Values: []string{"v"}}, nil
		},
	}
	return sc
}

func TestContentThroughCatalog(t *testing.T) {
	f := newFixture(t, contentScript(), ports.TransportHTTP, nil)
	f.connect(t)
	cat := f.srv.Catalog()
	require.Len(t, cat.Prompts, 1)
	ctx := context.Background()

	res, err := cat.Prompts[0].Get(ctx, map[string]string{"x": "hi"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"text","text":"hi"}`, string(res.Messages[0].Content))

	rr, err := cat.Resources[0].Read(ctx)
	require.NoError(t, err)
	assert.Equal(t, "body", rr.Contents[0].Text)

	c, err := cat.Prompts[0].Complete(ctx, "x", "", nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"v"}, c.Values)
	sess := f.session(t, 0)
	assert.Len(t, sess.PromptRequests(), 1)
	assert.Len(t, sess.ReadRequests(), 1)
	assert.Len(t, sess.CompleteRequests(), 1)
}

func TestContentNotConnected(t *testing.T) {
	f := newFixture(t, contentScript(), ports.TransportHTTP, nil)
	_, err := f.srv.GetPrompt(context.Background(), ports.GetPromptRequest{Name: "p"})
	requireRefusal(t, err, refusal.Transient, ReasonServerUnavailable)
	require.NoError(t, closeWithin(t, f.srv))
	_, err = f.srv.ReadResource(context.Background(), ports.ReadRequest{URI: "test://r/1"})
	requireRefusal(t, err, refusal.Internal, ReasonClosed)
}

func TestContentUnsupportedPassesThrough(t *testing.T) {
	sc := contentScript()
	sc.Identity.Completions = false
	sc.Content.Unsupported = func(string) error {
		return refusal.New(refusal.Unsupported, "capability_undeclared", serverID)
	}
	f := newFixture(t, sc, ports.TransportHTTP, nil)
	f.connect(t)
	_, err := f.srv.Complete(context.Background(), ports.CompleteRequest{Argument: "x"})
	requireRefusal(t, err, refusal.Unsupported, "capability_undeclared")
	assert.Equal(t, Ready, f.srv.Status().State, "the server stays usable")
}

func TestContentTimeout(t *testing.T) {
	sc := contentScript()
	sc.Content.ReadResource = func(ctx context.Context, _ ports.ReadRequest) (ports.ReadResult, error) {
		<-ctx.Done()
		return ports.ReadResult{}, ctx.Err()
	}
	for _, o := range []Options{
		{CallTimeoutMax: 10 * time.Millisecond},
		{CallTimeout: 10 * time.Millisecond},
		{CallTimeout: NoTimeout, CallTimeoutMax: 10 * time.Millisecond},
	} {
		f := newFixture(t, sc, ports.TransportHTTP, &o)
		f.connect(t)
		_, err := f.srv.ReadResource(context.Background(), ports.ReadRequest{URI: "test://r/1"})
		requireRefusal(t, err, refusal.Transient, ReasonCallTimeout)
	}
}

func TestContentPanicFailsServer(t *testing.T) {
	sc := contentScript()
	sc.Content.GetPrompt = func(context.Context, ports.GetPromptRequest) (ports.PromptResult, error) {
		panic("server bytes")
	}
	f := newFixture(t, sc, ports.TransportHTTP, nil)
	f.connect(t)
	_, err := f.srv.GetPrompt(context.Background(), ports.GetPromptRequest{Name: "p"})
	requireRefusal(t, err, refusal.Internal, ReasonPanic)
	assert.Equal(t, Failed, f.srv.Status().State)
	assert.True(t, f.session(t, 0).Closed())
}

// updateLog records delivered updates.
type updateLog struct {
	mu  sync.Mutex
	got []ports.ResourceUpdate
	ch  chan struct{}
}

func newUpdateLog() *updateLog { return &updateLog{ch: make(chan struct{}, 1000)} }

func (l *updateLog) on(u ports.ResourceUpdate) {
	l.mu.Lock()
	l.got = append(l.got, u)
	l.mu.Unlock()
	l.ch <- struct{}{}
}

func (l *updateLog) updates() []ports.ResourceUpdate {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]ports.ResourceUpdate(nil), l.got...)
}

func TestResourceUpdatesCoalesced(t *testing.T) {
	log := newUpdateLog()
	// A long interval: after the first batch, a storm waits for the next.
	f := newFixture(t, contentScript(), ports.TransportHTTP, &Options{OnResourceUpdated: log.on, UpdateInterval: time.Hour})
	f.connect(t)
	ctx := context.Background()
	require.NoError(t, f.srv.Subscribe(ctx, "test://r/1"))
	require.NoError(t, f.srv.Subscribe(ctx, "test://r/2"))
	sess := f.session(t, 0)
	assert.Equal(t, []string{"test://r/1", "test://r/2"}, sess.Subscriptions())

	require.True(t, sess.FireResourceUpdated("test://r/1"))
	recv(t, log.ch)
	// The storm: 10,000 updates of two URIs while the interval runs.
	for range 5000 {
		sess.FireResourceUpdated("test://r/1")
		sess.FireResourceUpdated("test://r/2")
	}
	assert.False(t, sess.FireResourceUpdated("test://r/3"), "an unsubscribed URI is not delivered by the session")
	assert.Equal(t, []ports.ResourceUpdate{{Server: serverID, URI: "test://r/1"}}, log.updates(),
		"nothing more is delivered within the interval")
	f.srv.updates.mu.Lock()
	pending := len(f.srv.updates.pending)
	f.srv.updates.mu.Unlock()
	assert.Equal(t, 2, pending, "the storm is two pending URIs")

	require.NoError(t, f.srv.Unsubscribe(ctx, "test://r/2"))
	assert.Equal(t, []string{"test://r/1"}, f.srv.Subscriptions())
	assert.Equal(t, []string{"test://r/1"}, sess.Subscriptions())
}

func TestResourceUpdatesDelivered(t *testing.T) {
	log := newUpdateLog()
	f := newFixture(t, contentScript(), ports.TransportHTTP, &Options{OnResourceUpdated: log.on, UpdateInterval: time.Millisecond})
	f.connect(t)
	require.NoError(t, f.srv.Subscribe(context.Background(), "test://r/1"))
	sess := f.session(t, 0)
	for range 3 {
		require.True(t, sess.FireResourceUpdated("test://r/1"))
		recv(t, log.ch)
	}
	for _, u := range log.updates() {
		assert.Equal(t, ports.ResourceUpdate{Server: serverID, URI: "test://r/1"}, u)
	}
}

func TestSubscriptionBound(t *testing.T) {
	f := newFixture(t, contentScript(), ports.TransportHTTP, &Options{MaxSubscriptions: 3})
	f.connect(t)
	ctx := context.Background()
	for i := range 3 {
		require.NoError(t, f.srv.Subscribe(ctx, fmt.Sprintf("test://r/%d", i)))
	}
	require.NoError(t, f.srv.Subscribe(ctx, "test://r/0"), "an existing subscription is not a new one")
	err := f.srv.Subscribe(ctx, "test://r/9")
	requireRefusal(t, err, refusal.Refused, ReasonTooManySubscriptions)
	assert.Equal(t, 4, f.session(t, 0).Calls("Subscribe"), "the refused one was not sent")
}

func TestResubscribeAfterReconnect(t *testing.T) {
	f := newFixture(t, contentScript(), ports.TransportHTTP, nil)
	f.connect(t)
	require.NoError(t, f.srv.Subscribe(context.Background(), "test://r/1"))
	f.session(t, 0).Disconnect()
	f.clock.blockUntil(t, 1)
	f.clock.Advance(time.Hour)
	f.rec.await(t, f.srv, "a second session", func(st Status) bool {
		return st.State == Ready && len(f.conn.Sessions()) == 2
	})
	require.Eventually(t, func() bool { return len(f.session(t, 1).Subscriptions()) == 1 }, wait, time.Millisecond)
	assert.Equal(t, []string{"test://r/1"}, f.session(t, 1).Subscriptions())
}

func TestPromptsAndResourcesListChangedRefresh(t *testing.T) {
	for _, kind := range []ports.ListKind{ports.ListPrompts, ports.ListResources, ports.ListResourceTemplates} {
		t.Run(string(kind), func(t *testing.T) {
			f := newFixture(t, contentScript(), ports.TransportHTTP, nil)
			f.connect(t)
			before := f.srv.Catalog()
			sess := f.session(t, 0)
			lists := func() (n int) {
				for _, l := range sess.Lists() {
					if l.Kind == ports.ListPrompts {
						n++
					}
				}
				return n
			}
			require.Equal(t, 1, lists())
			require.True(t, sess.FireListChanged(kind))
			f.rec.await(t, f.srv, "a refreshed catalog", func(st Status) bool { return st.Catalog != nil && st.Catalog != before })
			assert.Equal(t, 2, lists(), "the refresh listed the prompts again")
			require.Len(t, f.srv.Catalog().Prompts, 1)
		})
	}
}
