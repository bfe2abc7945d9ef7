package mcpserve

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// upstreamRounds is a Backend standing in for a modern upstream behind a
// session that hands its rounds on (ports.InputRound): "multi" asks a
// form, then the client's roots, then answers with both; "prompt" asks a
// form before its messages. It records every round it was sent.
type upstreamRounds struct {
	*fakeBackend
	mu   sync.Mutex
	sent []ports.InputRound // what each request carried
}

func (u *upstreamRounds) ToolServer(name string) string   { return "up-" + name }
func (u *upstreamRounds) PromptServer(name string) string { return "up-" + name }

func (u *upstreamRounds) record(r *ports.InputRound) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.sent = append(u.sent, ports.InputRound{Responses: r.Responses, State: r.State})
}

func (u *upstreamRounds) rounds() []ports.InputRound {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]ports.InputRound(nil), u.sent...)
}

var nameForm = ports.ElicitRequest{ServerID: "up", Mode: ports.ElicitForm, Message: "your name?",
	Schema: ports.ElicitSchema{Fields: []ports.ElicitField{{Name: "name", Type: ports.FieldString, Required: true}}}}

func (u *upstreamRounds) call(ctx context.Context, _ string, _ json.RawMessage) (ports.ToolResult, error) {
	r := ports.InputRoundOf(ctx)
	if r == nil {
		return ports.ToolResult{}, assert.AnError
	}
	u.record(r)
	switch {
	case r.State == "":
		r.Requests, r.NextState = map[string]ports.InputRequest{"step1": {Kind: ports.InputElicit, Elicit: &nameForm}}, "round=1\x00\xff"
	case r.State == "round=1\x00\xff" && r.Responses["step1"].Elicit != nil:
		name, _ := r.Responses["step1"].Elicit.Content["name"].(string)
		r.Requests, r.NextState = map[string]ports.InputRequest{"client_roots": {Kind: ports.InputRoots}}, "round=2;name="+name
	case strings.HasPrefix(r.State, "round=2;name=") && len(r.Responses["client_roots"].Roots) > 0:
		text := strings.TrimPrefix(r.State, "round=2;name=") + " " + r.Responses["client_roots"].Roots[0].URI
		b, _ := json.Marshal([]map[string]string{{"type": "text", "text": text}})
		return ports.ToolResult{Content: b}, nil
	default:
		r.Requests, r.NextState = map[string]ports.InputRequest{"step1": {Kind: ports.InputElicit, Elicit: &nameForm}}, "round=1\x00\xff"
	}
	return ports.ToolResult{Content: json.RawMessage(`[]`), IsError: true}, nil
}

func (u *upstreamRounds) GetPrompt(ctx context.Context, name string, args map[string]string) (ports.PromptResult, error) {
	r := ports.InputRoundOf(ctx)
	if r == nil {
		return u.fakeBackend.GetPrompt(ctx, name, args)
	}
	u.record(r)
	if a := r.Responses["ctx"].Elicit; a != nil && r.State == "p1" {
		return ports.PromptResult{Messages: []ports.PromptMessage{{Role: "user",
			Content: json.RawMessage(`{"type":"text","text":"context ` + a.Content["name"].(string) + `"}`)}}}, nil
	}
	r.Requests, r.NextState = map[string]ports.InputRequest{"ctx": {Kind: ports.InputElicit, Elicit: &nameForm}}, "p1"
	return ports.PromptResult{}, nil
}

func newUpstreamRounds(t *testing.T, opts *Options) (*Server, *upstreamRounds) {
	t.Helper()
	u := &upstreamRounds{fakeBackend: newFake(Catalog{
		Tools:   []Tool{{Name: "multi", InputSchema: objSchema}, {Name: "other", InputSchema: objSchema}},
		Prompts: []Prompt{{Name: "prompt"}},
	})}
	u.fakeBackend.call = u.call
	s := New(u, opts)
	t.Cleanup(s.Close)
	return s, u
}

// TestHandOnRounds: a go-sdk client on 2026-07-28 that declared
// elicitation and roots calls a tool whose upstream asks twice: each
// question reaches the client under the upstream's key, its SDK answers
// and retries, the upstream gets the client's answers with its own
// request state back byte for byte each round (serve's state is another,
// sealed), and the final result is the upstream's; serve holds nothing
// between rounds. A prompts/get is handed on the same way.
func TestHandOnRounds(t *testing.T) {
	s, u := newUpstreamRounds(t, nil)
	var mu sync.Mutex
	var keys []string
	c := &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		keys = append(keys, r.Params.Message)
		mu.Unlock()
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ann"}}, nil
	}}
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, c)
	client.AddRoots(&mcp.Root{URI: "file:///work", Name: "work"})
	cs := connectClient(t, s, client, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)

	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "multi"})
	require.NoError(t, err)
	assert.False(t, r.IsError, resultText(r))
	assert.Equal(t, "Ann file:///work", resultText(r))
	sent := u.rounds()
	require.Len(t, sent, 3)
	assert.Equal(t, []string{"", "round=1\x00\xff", "round=2;name=Ann"}, []string{sent[0].State, sent[1].State, sent[2].State},
		"the upstream's own states, echoed unchanged")
	assert.Nil(t, sent[0].Responses)
	assert.Equal(t, ports.ElicitAccept, sent[1].Responses["step1"].Elicit.Action)
	assert.Equal(t, []ports.Root{{URI: "file:///work", Name: "work"}}, sent[2].Responses["client_roots"].Roots)
	assert.Zero(t, s.Pending(), "nothing parked between rounds")

	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "prompt"})
	require.NoError(t, err)
	require.Len(t, p.Messages, 1)
	assert.Equal(t, "context Ann", p.Messages[0].Content.(*mcp.TextContent).Text)
	sent = u.rounds()
	require.Len(t, sent, 5)
	assert.Equal(t, "p1", sent[4].State)
}

// connectClient serves s to client in memory at version ("" the SDK's
// default).
func connectClient(t *testing.T, s *Server, client *mcp.Client, version string) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := s.srv.Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Close(); cancel() })
	return cs
}

// handOnClient is a 2026-07-28 client that declared caps and retries by
// hand.
func handOnClient(t *testing.T, s *Server, elicit, roots bool) *mcp.ClientSession {
	t.Helper()
	o := &mcp.ClientOptions{MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}
	if elicit {
		o.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, assert.AnError }
	}
	o.Capabilities = &mcp.ClientCapabilities{}
	if elicit {
		o.Capabilities.Elicitation = &mcp.ElicitationCapabilities{}
	}
	if roots {
		o.Capabilities.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
	}
	return connectAt(t, s, o, nil)
}

// TestHandOnRefusals: a requestState that is not serve's (altered in one
// byte, the suite's "-TAMPERED", the upstream's own), sealed for another
// tool or server, or expired is refused with a JSON-RPC error (invalid
// params) naming the reason, and nothing reaches the upstream; a question
// the client did not declare it can take (a form without elicitation,
// roots without roots) ends the call with an error result naming
// input_unavailable.
func TestHandOnRefusals(t *testing.T) {
	s, u := newUpstreamRounds(t, &Options{InputTimeout: time.Hour})
	cs := handOnClient(t, s, true, false)
	ctx := context.Background()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "multi"})
	require.NoError(t, err)
	require.True(t, r.NeedsInput(), "%+v", r)
	require.Contains(t, r.InputRequests, "step1", "the upstream's key")
	assert.Equal(t, "your name?", r.InputRequests["step1"].(*mcp.ElicitParams).Message)
	state := r.RequestState
	require.True(t, strings.HasPrefix(state, sealedPrefix))
	assert.NotContains(t, state, "round=1")

	answer := mcp.InputResponseMap{"step1": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ann"}}}
	flip := []byte(state)
	flip[len(flip)/2] ^= 1
	before := len(u.rounds())
	for _, tc := range []struct{ tool, state, reason string }{
		{"multi", state + "-TAMPERED", ReasonStateInvalid},
		{"multi", string(flip), ReasonStateInvalid},
		{"multi", sealedPrefix + "round=1", ReasonStateInvalid},
		{"other", state, ReasonStateMismatch},
	} {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, RequestState: tc.state, InputResponses: answer})
		require.Error(t, err, tc.state)
		assert.Contains(t, err.Error(), tc.reason)
		var je *jsonrpc.Error
		require.ErrorAs(t, err, &je)
		assert.Equal(t, int64(jsonrpc.CodeInvalidParams), je.Code)
	}
	assert.Len(t, u.rounds(), before, "nothing sent upstream for a refused state")

	// The roots question of round 2: this client declared no roots.
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "multi", RequestState: state, InputResponses: answer})
	require.NoError(t, err)
	assert.True(t, r.IsError)
	assert.Contains(t, resultText(r), ReasonInputUnavailable)

	// A client without elicitation is not handed the form.
	r, err = handOnClient(t, s, false, true).CallTool(ctx, &mcp.CallToolParams{Name: "multi"})
	require.NoError(t, err)
	assert.True(t, r.IsError)
	assert.Contains(t, resultText(r), ReasonInputUnavailable)

	// Expired.
	s2, _ := newUpstreamRounds(t, &Options{InputTimeout: time.Millisecond})
	cs2 := handOnClient(t, s2, true, false)
	r, err = cs2.CallTool(ctx, &mcp.CallToolParams{Name: "multi"})
	require.NoError(t, err)
	require.True(t, r.NeedsInput())
	time.Sleep(5 * time.Millisecond)
	_, err = cs2.CallTool(ctx, &mcp.CallToolParams{Name: "multi", RequestState: r.RequestState, InputResponses: answer})
	require.Error(t, err)
	assert.Contains(t, err.Error(), ReasonStateExpired)
	// Another serve (another key).
	_, err = cs2.CallTool(ctx, &mcp.CallToolParams{Name: "multi", RequestState: state, InputResponses: answer})
	require.Error(t, err)
	assert.Contains(t, err.Error(), ReasonStateInvalid)
}

// TestHandOnLegacyClient: a client before 2026-07-28 gets each question
// of a modern upstream's rounds as elicitation/create and roots/list on
// its own session (the one whose call caused it), and the upstream its
// answers with its state echoed; the final result is the upstream's. A
// question the client did not declare it can take ends the call by name,
// and an upstream that asks forever is stopped after maxLegacyRounds.
func TestHandOnLegacyClient(t *testing.T) {
	s, u := newUpstreamRounds(t, nil)
	var asked []string
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, r.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ann"}}, nil
		}})
	client.AddRoots(&mcp.Root{URI: "file:///work", Name: "work"})
	cs := connectClient(t, s, client, "2025-11-25")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "multi"})
	require.NoError(t, err)
	assert.False(t, r.IsError, resultText(r))
	assert.Equal(t, "Ann file:///work", resultText(r))
	assert.Equal(t, []string{"your name?"}, asked)
	sent := u.rounds()
	require.Len(t, sent, 3)
	assert.Equal(t, []string{"", "round=1\x00\xff", "round=2;name=Ann"}, []string{sent[0].State, sent[1].State, sent[2].State})

	p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "prompt"})
	require.NoError(t, err)
	require.Len(t, p.Messages, 1)
	assert.Equal(t, "context Ann", p.Messages[0].Content.(*mcp.TextContent).Text)

	// No roots declared: the second round ends the call.
	bare := connectAt(t, s, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Bob"}}, nil
	}, Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	r, err = bare.CallTool(ctx, &mcp.CallToolParams{Name: "multi"})
	require.NoError(t, err)
	assert.True(t, r.IsError)
	assert.Contains(t, resultText(r), ReasonInputUnavailable)

	// An upstream that asks forever.
	fb := newFake(Catalog{Tools: []Tool{{Name: "loop", InputSchema: objSchema}}})
	calls := 0
	fb.call = func(ctx context.Context, _ string, _ json.RawMessage) (ports.ToolResult, error) {
		calls++
		r := ports.InputRoundOf(ctx)
		r.Requests, r.NextState = map[string]ports.InputRequest{"q": {Kind: ports.InputElicit, Elicit: &nameForm}}, "again"
		return ports.ToolResult{Content: json.RawMessage(`[]`), IsError: true}, nil
	}
	ls := New(fb, nil)
	t.Cleanup(ls.Close)
	lc := connectAt(t, ls, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	r, err = lc.CallTool(ctx, &mcp.CallToolParams{Name: "loop"})
	require.NoError(t, err)
	assert.True(t, r.IsError)
	assert.Contains(t, resultText(r), ReasonInputRoundsExceeded)
	assert.Equal(t, 1+maxLegacyRounds, calls)
}
